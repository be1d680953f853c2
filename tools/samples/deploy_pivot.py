"""Story 3, deploy-pivot (opencode)."""

from __future__ import annotations

from collections.abc import Sequence

from samples.common import EMPTY_WRAPPER, Chance, Json, prose
from samples.opencode import OpencodeSession

DP_DIR = "/home/mira/dflash-ddtree"
DP_MSG_BASE = 10867
"""Index, in the original session, of the first message of this excerpt."""

DP_TASKS = ("fizzbuzz", "binary_search", "lru_cache", "json_parser", "matrix_mult", "quicksort",
            "graph_bfs", "regex_match", "trie_insert", "rate_limiter")
DP_OURS = (8.13, 7.92, 6.85, 7.41, 8.66, 7.70, 5.10, 6.12, 7.58, 7.33)
DP_ZLAB = (11.77, 11.90, 10.64, 11.22, 12.41, 11.58, 10.00, 10.12, 11.63, 11.33)

DP_UNIT = """# /etc/systemd/system/sglang-qwen.service
[Unit]
Description=SGLang OpenAI-compatible server (Qwen3.6-27B)
After=network-online.target

[Service]
User=llm
Environment=CUDA_VISIBLE_DEVICES=0
WorkingDirectory=/opt/sglang
ExecStart=/opt/sglang-venv/bin/python -m sglang.launch_server \\
    --model-path /models/Qwen3.6-27B --served-model-name qwen3.6-27b \\
    --host 0.0.0.0 --port 8000 --context-length 65536 --mem-fraction-static 0.85 \\
    --speculative-algorithm NEXTN --speculative-num-steps 3 \\
    --speculative-eagle-topk 1 --speculative-num-draft-tokens 4
Restart=on-failure
RestartSec=10

[Install]
WantedBy=multi-user.target"""

DP_OVERRIDE = """[Service]
Environment=SGLANG_DFLASH_VERIFY=ddtree
ExecStart=
ExecStart=/opt/sglang-venv/bin/python -m sglang.launch_server \\
    --model-path /models/Qwen3.6-27B --served-model-name qwen3.6-27b \\
    --host 0.0.0.0 --port 8000 --context-length 65536 --mem-fraction-static 0.82 \\
    --speculative-algorithm DFLASH \\
    --speculative-draft-model-path /models/zlab-dflash-qwen3.6-27b \\
    --speculative-dflash-block-size 16 --speculative-dflash-draft-window-size 16
"""


def _dp_eval(drafter: str, streaks: Sequence[float], chance: Chance) -> str:
    """The streak evaluation table for one drafter."""
    lines = [f"ddtree streak eval  drafter={drafter}  tree_budget=8  block_size=16  "
             "target=Qwen3.6-27B",
             "task             prompts   verify_steps   accepted   avg_streak"]
    for task, streak in zip(DP_TASKS, streaks, strict=True):
        steps = chance.integer(2100, 3300)
        lines.append(f"{task:<16}{12:>8}{steps:>15,}{round(steps * streak):>11,}{streak:>13.2f}")
    lines.append(f"mean avg_streak {sum(streaks) / len(streaks):.2f}")
    return "\n".join(lines)


def deploy_pivot() -> Json:
    """The pivot from training to deployment around messages 10880-10883."""
    s = OpencodeSession(
        10880, slug="brisk-meadow", title="deploy-pivot (excerpt around msg 10880)",
        directory=DP_DIR, created="2026-04-29T07:55:02.118Z", start="2026-05-02T16:12:51.004Z",
        version="1.4.1", provider="anthropic", model="claude-opus-4-7", context=118_300,
        project=Chance(1).hex(),
    )

    # --- the head-to-head evaluation (msgs 10867-10871)
    s.user("step_4000 is synced to llm-two. run the ddtree-8 streak eval on the coding set for it "
           "and for the z-lab drafter so we have a clean comparison",
           title="DDTree streak eval: step_4000 vs z-lab")
    a = s.assistant()
    a.bash("ssh llm-two 'ls -la /models/dflash-ckpt/step_4000 && nvidia-smi "
           "--query-gpu=index,memory.used,memory.total,utilization.gpu --format=csv,noheader'",
           "total 3481604\n"
           "drwxr-xr-x 2 llm llm       4096 May  2 16:09 .\n"
           "drwxr-xr-x 7 llm llm       4096 May  2 16:09 ..\n"
           "-rw-r--r-- 1 llm llm       1204 May  2 16:09 config.json\n"
           "-rw-r--r-- 1 llm llm 3565138112 May  2 16:09 model.safetensors\n"
           "-rw-r--r-- 1 llm llm        212 May  2 16:09 train_state.json\n"
           "0, 81204 MiB, 97887 MiB, 3 %\n1, 0 MiB, 97887 MiB, 0 %",
           description="Check the synced checkpoint and GPUs on llm-two", seconds=1.3)
    a.end()
    chance = Chance(4000)
    a = s.assistant()
    a.bash("ssh llm-two 'cd /opt/ddtree-eval && CUDA_VISIBLE_DEVICES=1 /opt/sglang-venv/bin/python "
           "eval_streak.py --drafter /models/dflash-ckpt/step_4000 --tasks coding10 "
           "--tree-budget 8'",
           _dp_eval("/models/dflash-ckpt/step_4000", DP_OURS, chance),
           description="Streak eval for step_4000", seconds=522.8, timeout=1200000)
    a.end()
    a = s.assistant()
    a.bash("ssh llm-two 'cd /opt/ddtree-eval && CUDA_VISIBLE_DEVICES=1 /opt/sglang-venv/bin/python "
           "eval_streak.py --drafter /models/zlab-dflash-qwen3.6-27b --tasks coding10 "
           "--tree-budget 8'",
           _dp_eval("/models/zlab-dflash-qwen3.6-27b", DP_ZLAB, chance),
           description="Streak eval for the z-lab drafter", seconds=497.1, timeout=1200000)
    a.end()
    rows = "\n".join(f"| {task} | {ours:.2f} | {zlab:.2f} | {ours - zlab:+.2f} |"
                     for task, ours, zlab in zip(DP_TASKS, DP_OURS, DP_ZLAB, strict=True))
    a = s.assistant()
    a.think("Our checkpoint loses on all ten tasks, by 3.6 to 4.9 tokens per verify step on "
            "most and by almost 5 on graph_bfs. Present it plainly; the gap is far too large "
            "to close with the remaining budget of this run.")
    a.say("DDTree-8 average streak on the 10 coding tasks (12 prompts each, same target, same "
          "tree budget):\n\n"
          "| task | step_4000 | z-lab | diff |\n|---|---|---|---|\n" + rows + "\n"
          f"| **mean** | **{sum(DP_OURS) / 10:.2f}** | **{sum(DP_ZLAB) / 10:.2f}** | "
          f"**{(sum(DP_OURS) - sum(DP_ZLAB)) / 10:+.2f}** |\n\n"
          "z-lab is ahead on every task; the smallest gap is json_parser (-3.81), the largest "
          "graph_bfs (-4.90). At the current rate of improvement (about +0.4 per 500 steps) "
          "our run would need well over 4,000 more steps to get close.")
    a.end("stop")

    # --- the order and the investigation (msgs 10872-10879)
    s.pause(3 * 60 + 26.8)
    s.user("ok that settles it. stop the training for now and deploy z-lab with ddtree on the "
           "pro6000, draft length up to 16", title="Stop training, deploy z-lab with DDTree")
    a = s.assistant()
    a.bash("ssh kpro6 'pct exec 200 -- bash -lc \"tmux kill-session -t ddtree; sleep 6; "
           "pgrep -fa train_ddtree || echo no trainer; ls "
           "/root/dflash/runs/ddtree-1p1m-scratch/ckpt "
           "| tail -n 2\"'",
           "no trainer\nstep_4000\nstep_4500",
           description="Stop the training run on CT200", seconds=8.4)
    a.end()
    a = s.assistant()
    a.bash("ssh llm-two 'systemctl cat sglang-qwen.service; systemctl is-active sglang-qwen'",
           DP_UNIT + "\nactive", description="Read the current SGLang service unit", seconds=0.6)
    a.end()
    a = s.assistant()
    a.think("The service runs NEXTN with 4 draft tokens. Find out what the installed SGLang "
            "offers for DFlash.")
    a.bash("ssh llm-two '/opt/sglang-venv/bin/python -m sglang.launch_server --help | "
           "grep -iA2 dflash'",
           "  --speculative-algorithm {EAGLE,EAGLE3,NEXTN,STANDALONE,NGRAM,DFLASH}\n"
           "--\n"
           "  --speculative-dflash-block-size SPECULATIVE_DFLASH_BLOCK_SIZE\n"
           "                        Block size of the DFlash draft model. Defaults to the\n"
           "                        value in the draft config.\n"
           "  --speculative-dflash-draft-window-size SPECULATIVE_DFLASH_DRAFT_WINDOW_SIZE\n"
           "                        Maximum number of draft tokens verified per step.",
           description="List the DFlash server flags", seconds=4.9)
    a.end()
    a = s.assistant()
    a.bash("ssh llm-two \"grep -n 'def \\|verify\\|window' /opt/sglang/python/sglang/srt/"
           "speculative/dflash_worker.py | head -n 24\"",
           "31:class DFlashWorker(TpModelWorker):\n"
           "58:    def __init__(self, server_args, gpu_id, tp_rank, dp_rank, nccl_port, "
           "target_worker):\n"
           "74:        self.block_size = server_args.speculative_dflash_block_size or "
           "cfg.block_size\n"
           "75:        self.window = server_args.speculative_dflash_draft_window_size or "
           "self.block_size\n"
           "112:    def forward_batch_generation(self, batch):\n"
           "139:    def draft(self, batch, aux_hidden):\n"
           "171:    def verify(self, batch, draft_tokens):\n"
           "173:        # chain verification: accept the longest prefix the target agrees with\n"
           "204:    def _accept_prefix(self, logits, draft_tokens):\n"
           "231:    def capture_layers(self):",
           description="Skim the DFlash worker", seconds=0.7)
    a.end()
    a = s.assistant()
    a.bash("ssh llm-two 'grep -rn -i \"ddtree\" /root/ddtree --include=*.py --include=*.md "
           "| head -n 8; echo ---; grep -rln -i ddtree /opt/sglang/python/sglang || echo "
           "\"not in sglang\"'",
           "/root/ddtree/README.md:1:# DDTree: tree verification for block-diffusion drafters\n"
           "/root/ddtree/README.md:18:SGLang: `pip install -e /root/ddtree` in the server venv, "
           "then set SGLANG_DFLASH_VERIFY=ddtree.\n"
           "/root/ddtree/README.md:19:The tree budget follows "
           "--speculative-dflash-draft-window-size.\n"
           "/root/ddtree/ddtree/sglang_hook.py:12:\"\"\"Replace DFlashWorker.verify with DDTree "
           "when "
           "SGLANG_DFLASH_VERIFY=ddtree.\"\"\"\n"
           "/root/ddtree/ddtree/sglang_hook.py:40:def ddtree_verify(self, batch, draft_tokens):\n"
           "/root/ddtree/ddtree/tree.py:9:class DDTree:\n"
           "---\nnot in sglang",
           description="Look for the DDTree integration", seconds=1.9)
    a.end()
    a = s.assistant()
    a.bash("ssh llm-two 'cat /models/zlab-dflash-qwen3.6-27b/config.json'",
           '{\n  "architectures": ["DFlashDraftModel"],\n  "block_size": 16,\n'
           '  "hidden_size": 5120,\n  "num_hidden_layers": 5,\n  "num_attention_heads": 32,\n'
           '  "num_key_value_heads": 8,\n  "target_layer_ids": [1, 16, 31, 46, 61],\n'
           '  "mask_token_id": 151669,\n  "torch_dtype": "bfloat16",\n'
           '  "vocab_size": 151936\n}',
           description="Read the z-lab drafter config", seconds=0.5)
    a.end()
    a = s.assistant()
    a.bash("ssh llm-two 'grep -rn \"def set_dflash_layers_to_capture\" "
           "/opt/sglang/python/sglang/srt/models/ | head'",
           "/opt/sglang/python/sglang/srt/models/qwen3.py:412:    def "
           "set_dflash_layers_to_capture(self, layer_ids):\n"
           "/opt/sglang/python/sglang/srt/models/qwen3_moe.py:905:    def "
           "set_dflash_layers_to_capture(self, layer_ids):",
           description="Check target-side DFlash capture support", seconds=0.8)
    a.end()

    # --- the empty assistant message (10880), the empty user message (10881), the handoff
    a = s.assistant(first_token=2.9)
    a.cut()
    s.pause(27.3)
    s.user(EMPTY_WRAPPER)
    a = s.assistant(first_token=3.8)
    a.think("Nothing came back on my side and the user sent nothing either. Write the whole "
            "state down as a handoff so the next steps are unambiguous.", seconds=3.0)
    a.say(DP_HANDOFF)
    a.end("stop")

    # --- the order, repeated (10883), and the deployment
    s.pause(2 * 60 + 4.6)
    s.user("stop training and deploy the z-lab drafter with ddtree on the pro6000, up to 16 "
           "draft tokens. go")
    a = s.assistant()
    todos = [
        {"content": "Confirm DFlash training on CT200 is stopped", "status": "completed",
         "priority": "high", "id": "1"},
        {"content": "Switch sglang-qwen.service to DFLASH + z-lab drafter, DDTree verify, "
                    "window 16", "status": "in_progress", "priority": "high", "id": "2"},
        {"content": "Restart the service and verify it loads and serves", "status": "pending",
         "priority": "high", "id": "3"},
        {"content": "Smoke test plus a quick acceptance check on coding prompts",
         "status": "pending", "priority": "medium", "id": "4"},
    ]
    a.todo(todos)
    a.end()
    a = s.assistant()
    a.bash("ssh llm-two 'sudo /opt/sglang-venv/bin/pip install -q -e /root/ddtree && "
           "/opt/sglang-venv/bin/python -c \"import ddtree.sglang_hook as h; print(h.__file__)\"'",
           "/root/ddtree/ddtree/sglang_hook.py",
           description="Install the DDTree hook into the service venv", seconds=21.7)
    a.end()
    a = s.assistant()
    a.bash("ssh llm-two 'sudo mkdir -p /etc/systemd/system/sglang-qwen.service.d && sudo tee "
           "/etc/systemd/system/sglang-qwen.service.d/dflash.conf > /dev/null' <<'EOF'\n"
           + DP_OVERRIDE + "EOF",
           "", description="Add a drop-in switching the service to DFlash", seconds=0.9)
    a.end()
    a = s.assistant()
    a.bash("ssh llm-two 'sudo systemctl daemon-reload && sudo systemctl restart sglang-qwen && "
           "sleep 150 && journalctl -u sglang-qwen --since \"3 min ago\" --no-pager | grep -E "
           "\"DFLASH|DDTree|window|fired up|Error\" | tail -n 6'",
           "May 02 16:38:04 llm-two python[731204]: [2026-05-02 16:38:04] "
           "speculative_algorithm=DFLASH "
           "draft=/models/zlab-dflash-qwen3.6-27b\n"
           "May 02 16:38:31 llm-two python[731204]: [2026-05-02 16:38:31] DFlash: block_size=16 "
           "draft_window=16 capture layers [1, 16, 31, 46, 61]\n"
           "May 02 16:38:31 llm-two python[731204]: [2026-05-02 16:38:31] ddtree: "
           "DFlashWorker.verify "
           "replaced (SGLANG_DFLASH_VERIFY=ddtree, budget 16)\n"
           "May 02 16:39:58 llm-two python[731204]: [2026-05-02 16:39:58] The server is fired up "
           "and ready to roll!",
           description="Restart the service and read its log", seconds=153.6, timeout=300000)
    a.end()
    a = s.assistant()
    a.bash("curl -s http://llm-two:8000/v1/chat/completions -H 'Content-Type: application/json' "
           "-d '{\"model\": \"qwen3.6-27b\", \"max_tokens\": 200, \"messages\": [{\"role\": "
           "\"user\", \"content\": \"Write fizzbuzz in Rust.\"}]}' | python -c \"import json, "
           "sys; r = json.load(sys.stdin); print(r['choices'][0]['message']['content'][:160]); "
           "print(r['usage'])\"",
           "```rust\nfn main() {\n    for i in 1..=100 {\n        match (i % 3, i % 5) {\n"
           "            (0, 0) => println!(\"FizzBuzz\"),\n            (0, _) => "
           "println!(\"Fizz\"),\n"
           "{'prompt_tokens': 16, 'total_tokens': 216, 'completion_tokens': 200}",
           description="Smoke test the OpenAI endpoint", seconds=2.4)
    a.end()
    a = s.assistant()
    a.bash("ssh llm-two 'cd /opt/ddtree-eval && /opt/sglang-venv/bin/python serve_check.py "
           "--url http://localhost:8000 --tasks coding10 --prompts-per-task 3'",
           "30 requests, 0 errors\n"
           "mean accepted per verify step  10.91\n"
           "decode tok/s (single stream)   187.4   (NEXTN before: 96.2)\n"
           "p50 first-token latency        212 ms",
           description="Quick acceptance check through the service", seconds=64.3,
           timeout=300000)
    a.end()
    a = s.assistant()
    a.todo([{**todo, "status": "completed"} for todo in todos])
    a.say("Deployed.\n\n"
          "- Training on CT200 is stopped; the last checkpoints are step_4000 and step_4500.\n"
          "- `sglang-qwen.service` on llm-two now runs DFLASH with the z-lab drafter "
          "(`/models/zlab-dflash-qwen3.6-27b`), block size 16, draft window 16, and DDTree "
          "verification through the `/root/ddtree` hook (`SGLANG_DFLASH_VERIFY=ddtree`). The "
          "change is a drop-in, `sglang-qwen.service.d/dflash.conf`; deleting it and "
          "restarting brings NEXTN back.\n"
          "- Smoke test passes. Through the service: 10.91 accepted tokens per verify step on "
          "30 coding prompts, 187 tok/s single stream against 96 with NEXTN.")
    a.end("stop")
    return s.export()


DP_HANDOFF = prose("""# Handoff: DFlash drafter campaign -> z-lab deployment on llm-two

## Where things stand
- **Decision (user):** stop our DFlash training for now and put the z-lab DFlash drafter into
  production on the Pro6000 box (llm-two) with DDTree verification and draft length up to 16.
- **Training:** stopped on CT200 (tmux session `ddtree` killed, no trainer processes). Run
  directory `runs/ddtree-1p1m-scratch`, last checkpoints `step_4000` and `step_4500`. Nothing
  else uses the CT200 GPUs now.
- **Deployment:** not started. `sglang-qwen.service` on llm-two still runs NEXTN with 4 draft
  tokens.

## Why we are switching
Head-to-head DDTree-8 streak eval on the 10 coding tasks (12 prompts each, Qwen3.6-27B target,
  tree budget 8):
- step_4000: mean 7.28
- z-lab: mean 11.26
- z-lab wins all ten tasks; gaps range from -3.81 (json_parser) to -4.90 (graph_bfs); fizzbuzz
  8.13 vs 11.77.

## The training campaign in short (for whoever resumes it)
- 1.1M-sample set, DDTree-tuned objective, 5 target GPUs + 3 drafter GPUs on CT200, ~20k tok/s
  after the torch cu128 revert.
- Fixed along the way: NaN losses from an unsafe side stream in the hidden-state copy, a
  blocking host copy (now an async pipeline with pinned buffers), W&B logging moved off the hot
  path, hidden-state buffer defaults retuned.
- Improvement rate late in the run: about +0.4 streak per 500 steps. Closing a 4-token gap would
  take far more steps than planned.

## Deployment facts gathered
- Service unit: `/etc/systemd/system/sglang-qwen.service`, user `llm`, GPU 0, port 8000, model
  `/models/Qwen3.6-27B`, served name `qwen3.6-27b`, `--mem-fraction-static 0.85`, context 65536.
- Installed SGLang (`/opt/sglang`, venv `/opt/sglang-venv`) has `--speculative-algorithm
  DFLASH`, `--speculative-dflash-block-size` and `--speculative-dflash-draft-window-size`.
- `dflash_worker.py` verifies chains only (longest accepted prefix). DDTree is **not** in
  SGLang.
- `/root/ddtree` ships `ddtree/sglang_hook.py`, which replaces `DFlashWorker.verify` when
  `SGLANG_DFLASH_VERIFY=ddtree` is set; the tree budget follows the draft window size. Needs
  `pip install -e /root/ddtree` in the service venv.
- z-lab drafter: `/models/zlab-dflash-qwen3.6-27b`, `DFlashDraftModel`, block size 16, 5 layers,
  captures target layers `[1, 16, 31, 46, 61]`.
- Target side: `qwen3.py` and `qwen3_moe.py` both implement `set_dflash_layers_to_capture`, so
  the dense 27B target can feed the drafter.

## Plan
1. Install the DDTree hook into `/opt/sglang-venv`.
2. Add a systemd drop-in instead of editing the unit: `ExecStart` with `--speculative-algorithm
  DFLASH --speculative-draft-model-path /models/zlab-dflash-qwen3.6-27b
  --speculative-dflash-block-size 16 --speculative-dflash-draft-window-size 16`,
  `Environment=SGLANG_DFLASH_VERIFY=ddtree`, and `--mem-fraction-static 0.82` to leave room for
  the drafter.
3. `daemon-reload`, restart, and check the log for the DFlash settings, the hook message and
  "fired up".
4. Smoke test `/v1/chat/completions`, then a short acceptance check through the service on the
  coding prompts.
5. Rollback: remove the drop-in and restart, which brings NEXTN back.

## Hosts and access
- CT200: LXC container on Proxmox host kpro6 (`ssh kpro6 'pct exec 200 -- ...'`, or `./ct200`
  from the repo). 8x RTX PRO 6000; training venv `/root/venv` (torch 2.9.0+cu128), SGLang only
  in `/root/venv-sglang`.
- llm-two ("the Pro6000 box"): production inference host, 2x RTX PRO 6000. GPU 0 serves
  `sglang-qwen.service` on port 8000; GPU 1 is used for evaluations (`/opt/ddtree-eval`).
  Service changes need `sudo`.
- Model files live in `/models` on llm-two; checkpoints are synced there from CT200 with
  `scripts/sync_ckpt.sh`.

## Files worth knowing
- `scripts/launch_1p1m.sh`: launch script of the stopped run (5+3, budget 49152, batch 64).
- `/opt/ddtree-eval/eval_streak.py`: the streak evaluation used above; `serve_check.py` runs the
  same prompts through a live server.
- `/root/ddtree/README.md`: how the DDTree hook is enabled; `ddtree/sglang_hook.py`,
  `ddtree/tree.py`.
- `NOTES.md`: environment rules (separate venvs, a pip freeze per run).

## Open questions
- Whether to keep step_4500 for a later distillation attempt from z-lab, or drop the custom
  drafter line entirely.
- Whether the eval GPU (llm-two GPU 1) should stay reserved for evaluations now that training is
  paused.""")
