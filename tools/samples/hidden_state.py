"""Story 2, hidden-state (opencode)."""

from __future__ import annotations

from samples.common import EMPTY_WRAPPER, Chance, Json, prose
from samples.opencode import OpencodeSession

HS_DIR = "/home/teo/kimi-eagle3"
HS_MSG_BASE = 4493
"""Index, in the original session, of the first message of this excerpt."""

HS_SERVER_CMD = (
    "python -m sglang.launch_server --model-path /models/Kimi-K2.5-INT4 --tp 8 "
    "--trust-remote-code --speculative-algorithm EAGLE3 "
    "--speculative-draft-model-path /models/kimi-k25-eagle3-v2 --speculative-num-steps 5 "
    "--speculative-eagle-topk 1 --speculative-num-draft-tokens 6 --mem-fraction-static 0.88 "
    "--host 0.0.0.0 --port 30000"
)

CAPTURE_PY = '''"""Dump target hidden states for EAGLE-3 training (run once per data shard)."""

import torch

# HF hidden_states[0] is the embedding output; hidden_states[i] is the output of layer i-1.
CAPTURE = (0, 3, 31)  # embed, after layer 2, after layer 30


@torch.no_grad()
def capture(model, input_ids, attention_mask):
    out = model(input_ids=input_ids, attention_mask=attention_mask, output_hidden_states=True)
    states = [out.hidden_states[i] for i in CAPTURE]
    # order matters: the draft fc layer sees cat([embed, l3, l31], dim=-1)
    aux = torch.cat(states, dim=-1)
    target = out.hidden_states[-1]
    return aux.to(torch.bfloat16), target.to(torch.bfloat16)
'''

EAGLE3_FORWARD = """   218	    def forward(self, input_ids, positions, forward_batch):
   219	        embeds = self.embed_tokens(input_ids)
   220	        hidden_states = forward_batch.spec_info.hidden_states
   221	        if hidden_states.shape[-1] != embeds.shape[-1]:
   222	            # target aux states arrive concatenated: [n_tokens, 3 * hidden]
   223	            hidden_states = self.fc(hidden_states)
   224	        residual = None
   225	        hidden_states, residual = self.midlayer(
   226	            positions, embeds, hidden_states, forward_batch, residual
   227	        )
   228	        hidden_states_to_logits, hidden_states_to_aux = self.norm(hidden_states, residual)
   229	        return hidden_states_to_logits, [hidden_states_to_aux]"""


def hidden_state() -> Json:
    """EAGLE-3 debugging around the empty message at index 4503."""
    s = OpencodeSession(
        3000, slug="amber-lantern", title="hidden-state (excerpt around msg 4503)",
        directory=HS_DIR, created="2026-02-03T10:41:09.214Z", start="2026-02-12T00:58:31.020Z",
        version="1.2.5", provider="anthropic", model="claude-opus-4-6", context=71_200,
        project=Chance(2).hex(),
    )
    s.last_user = s.ids.make("msg", s.now)
    s.jump("2026-02-12T01:37:44.902Z")

    # --- the last step before the night (msg 4493)
    a = s.assistant()
    a.bash("ssh gpu8 'pkill -f sglang.launch_server; sleep 10; cd /opt/sglang && nohup "
           + HS_SERVER_CMD + " > /var/log/sglang/kimi-eagle3.log 2>&1 & echo started'",
           "started", description="Restart SGLang with the patched capture", seconds=12.4)
    a.say("The server is restarting with the patched `deepseek_v2.py` (embedding capture for "
          "layer id -1) and the draft config changed to `[-1, 2, 30]`. Loading the INT4 weights "
          "over eight GPUs takes about 12 minutes; once it's up I'll rerun the acceptance "
          "benchmark.")
    a.end("stop")

    # --- the part-less user message after the night (msg 4494) and the benchmark
    s.jump("2026-02-12T08:49:16.337Z")
    s.user(None, parts=False)
    a = s.assistant(first_token=2.6)
    a.think("Picking up after a long pause. The server should have finished loading hours ago; "
            "check that it is alive and which layers it captures before benchmarking.")
    a.bash("ssh gpu8 'curl -s localhost:30000/health_generate -o /dev/null -w \"%{http_code}\\n\"; "
           "grep -E \"aux hidden|capture|fired up\" /var/log/sglang/kimi-eagle3.log | tail -n 4'",
           "200\n"
           "[2026-02-12 01:39:02 TP0] EAGLE3 draft model: eagle_aux_hidden_state_layer_ids=[-1, "
           "2, 30]\n"
           "[2026-02-12 01:39:02 TP0] target will capture aux hidden states at layers [0, 3, 31] "
           "(layer 0 = embedding output)\n"
           "[2026-02-12 01:51:27] The server is fired up and ready to roll!",
           description="Check the server is up and what it captures", seconds=1.8)
    a.end()
    a = s.assistant()
    a.bash("python bench/accept_len.py --url http://gpu8:30000 --prompts bench/prompts_40.jsonl "
           "--max-tokens 512",
           "prompts        40\n"
           "output tokens  20,480\n"
           "mean accept    1.82 / 6 draft tokens\n"
           "per-token acc  0.301\n"
           "decode tok/s   38.6 (single stream)\n"
           "baseline tok/s 31.2 (no speculation, from bench/results/baseline.json)",
           description="Measure acceptance length", seconds=331.7, timeout=600000, workdir=HS_DIR)
    a.end()
    a = s.assistant()
    a.think("1.82 accepted tokens per step, the same as before the fix. The draft reached 74.7% "
            "top-1 on held-out captures, which should give an accept length around 3.5 with "
            "six draft tokens. Either the patch is not active, or the draft still gets different "
            "inputs from the ones it was trained on. First confirm the patch is really in the "
            "installed file.")
    a.bash("ssh gpu8 'cd /opt/sglang && git diff --stat && git diff python/sglang/srt/models/"
           "deepseek_v2.py | head -n 40'",
           " python/sglang/srt/models/deepseek_v2.py | 14 ++++++++++----\n"
           " 1 file changed, 10 insertions(+), 4 deletions(-)\n"
           "diff --git a/python/sglang/srt/models/deepseek_v2.py "
           "b/python/sglang/srt/models/deepseek_v2.py\n"
           "index 4c1e0d2..9a7f3b8 100644\n"
           "--- a/python/sglang/srt/models/deepseek_v2.py\n"
           "+++ b/python/sglang/srt/models/deepseek_v2.py\n"
           "@@ -2291,6 +2291,11 @@ class DeepseekV2Model(nn.Module):\n"
           "         aux_hidden_states = []\n"
           "+        if self.capture_embedding:\n"
           "+            # layer id -1 in the draft config means the embedding output\n"
           "+            aux_hidden_states.append(hidden_states)\n"
           "         for i in range(normal_start_layer, normal_end_layer):\n"
           "             with get_global_expert_distribution_recorder().with_current_layer(i):\n"
           "                 if i in self.layers_to_capture:\n"
           "@@ -2580,8 +2585,11 @@ class DeepseekV2ForCausalLM(nn.Module):\n"
           "     def set_eagle3_layers_to_capture(self, layer_ids=None):\n"
           "         if layer_ids is None:\n"
           "             num_layers = self.config.num_hidden_layers\n"
           "             self.model.layers_to_capture = [2, num_layers // 2, num_layers - 3]\n"
           "         else:\n"
           "-            self.model.layers_to_capture = [val + 1 for val in layer_ids]\n"
           "+            self.model.capture_embedding = -1 in layer_ids\n"
           "+            self.model.layers_to_capture = [\n"
           "+                val + 1 for val in layer_ids if val != -1\n"
           "+            ]",
           description="Show the SGLang patch on the server", seconds=0.9)
    a.end()
    a = s.assistant()
    a.bash("ssh gpu8 'python -c \"import json; c = json.load(open(\\\"/models/kimi-k25-eagle3-v2/"
           "config.json\\\")); print({k: c[k] for k in (\\\"architectures\\\", "
           "\\\"hidden_size\\\", "
           "\\\"eagle_config\\\", \\\"draft_vocab_size\\\")})\"'",
           "{'architectures': ['LlamaForCausalLMEagle3'], 'hidden_size': 7168, 'eagle_config': "
           "{'eagle_aux_hidden_state_layer_ids': [-1, 2, 30], 'use_aux_hidden_state': True}, "
           "'draft_vocab_size': 32000}",
           description="Check the draft model config", seconds=0.8)
    a.end()
    a = s.assistant()
    a.bash("ssh gpu8 \"sed -n '218,229p' /opt/sglang/python/sglang/srt/models/llama_eagle3.py\"",
           EAGLE3_FORWARD, description="Read the EAGLE-3 draft forward", seconds=0.5)
    a.end()
    a = s.assistant()
    a.read(HS_DIR + "/train/capture_hidden.py", CAPTURE_PY)
    a.end()
    a = s.assistant()
    a.think("Training order is [embed, after layer 2, after layer 30]; SGLang now claims to "
            "capture [0, 3, 31] with 0 meaning the embedding, which is the same thing in its "
            "numbering. Order and layer choice match on paper. Rule out the draft weights: run "
            "the draft offline on captures made by the HF pipeline for the same 40 prompts.")
    a.bash("python eval/offline_draft.py --draft /models/kimi-k25-eagle3-v2 --captures "
           "captures/bench40 --steps 6",
           "loaded 40 prompts, 20,480 positions\n"
           "top-1 acc (step 1)   0.751\n"
           "chain acc (6 steps)  0.744 mean per token\n"
           "expected accept len  3.47 / 6",
           description="Evaluate the draft on HF-pipeline captures", seconds=88.6, timeout=300000,
           workdir=HS_DIR)
    a.say("Offline, on hidden states captured the way training captured them, the same draft "
          "reaches 74.4% per token (expected accept length 3.47). Served by SGLang it gets "
          "30.1%. So the weights are fine and the draft still receives something different at "
          "inference time, even with the layer ids fixed.")
    a.end()
    a = s.assistant()
    a.bash("ssh gpu8 \"cd /opt/sglang && python - <<'EOF'\n"
           "from pathlib import Path\n"
           "p = Path('python/sglang/srt/models/llama_eagle3.py')\n"
           "src = p.read_text()\n"
           "old = '            hidden_states = self.fc(hidden_states)\\n'\n"
           "new = old + (\n"
           "    '        if os.environ.get(\\\"EAGLE3_DEBUG\\\"):\\n'\n"
           "    '            _c = forward_batch.spec_info.hidden_states.float().chunk(3, "
           "dim=-1)\\n'\n"
           "    '            print(\\\"[EAGLE3_DEBUG] aux\\\", "
           "tuple(forward_batch.spec_info.hidden_states.shape),'\n"
           "    ' \\\"norms\\\", [round(c.norm(dim=-1).mean().item(), 2) for c in _c],'\n"
           "    ' \\\"cos01\\\", round(torch.nn.functional.cosine_similarity(_c[0], _c[1], "
           "dim=-1)'\n"
           "    '.mean().item(), 3), flush=True)\\n')\n"
           "assert src.count(old) == 1\n"
           "p.write_text(src.replace(old, new).replace('import torch\\n', 'import os\\nimport "
           "torch\\n', 1))\n"
           "print('patched')\n"
           "EOF\n"
           "git diff --stat python/sglang/srt/models/llama_eagle3.py\"",
           "patched\n python/sglang/srt/models/llama_eagle3.py | 7 +++++++\n"
           " 1 file changed, 7 insertions(+)",
           description="Add an EAGLE3_DEBUG print of the aux hidden states", seconds=1.1)
    a.say("Added a debug print to `llama_eagle3.py`: when `EAGLE3_DEBUG` is set, each draft "
          "forward prints the shape of the incoming aux hidden states, the mean L2 norm of "
          "each of the three 7168-wide chunks, and the cosine similarity between chunk 0 and "
          "chunk 1. Training captures have known norms (embedding about 0.8, layer 3 about "
          "41, layer 31 about 88), so one request should show which slot holds what.")
    a.end("stop")

    # --- the empty message (msg 4503) and the context re-establishment (msg 4504)
    s.pause(52.6)
    s.user(EMPTY_WRAPPER)
    a = s.assistant(first_token=3.4)
    a.think("An empty message. The debugging has gone on for days across several restarts; "
            "write down everything we know in one place, with the next steps, before "
            "restarting the server again.", seconds=3.3)
    a.say(HS_SUMMARY)
    a.end("stop")
    s.pause(3 * 60 + 9.4)
    s.user("ok, do 1 to 3 and show me what the print says")

    # --- the debug run and the finding (msgs 4506-4510)
    a = s.assistant()
    a.bash("ssh gpu8 'pkill -f sglang.launch_server; sleep 10; nvidia-smi "
           "--query-gpu=index,memory.used --format=csv,noheader'",
           "\n".join(f"{index}, 3 MiB" for index in range(8)),
           description="Stop the server and check GPUs are released", seconds=12.9)
    a.end()
    a = s.assistant()
    a.bash("ssh gpu8 'cd /opt/sglang && EAGLE3_DEBUG=1 nohup " + HS_SERVER_CMD
           + " > /var/log/sglang/kimi-eagle3-debug.log 2>&1 & echo started'",
           "started", description="Start the server with EAGLE3_DEBUG=1", seconds=1.4)
    a.end()
    a = s.assistant()
    a.bash("sleep 720; ssh gpu8 'tail -n 3 /var/log/sglang/kimi-eagle3-debug.log'",
           "[2026-02-12 09:13:32 TP0] Capture cuda graph end. Time elapsed: 41.87 s. "
           "mem usage=3.12 GB. avail mem=6.04 GB.\n"
           "[2026-02-12 09:13:39] INFO:     Uvicorn running on http://0.0.0.0:30000 "
           "(Press CTRL+C to quit)\n"
           "[2026-02-12 09:13:41] The server is fired up and ready to roll!",
           description="Wait for the server to load", seconds=720.3, timeout=900000)
    a.end()
    a = s.assistant()
    a.bash("curl -s http://gpu8:30000/v1/chat/completions -H 'Content-Type: application/json' "
           "-d '{\"model\": \"kimi\", \"max_tokens\": 64, \"messages\": [{\"role\": \"user\", "
           "\"content\": \"Write a Python function that reverses a linked list.\"}]}' "
           "> /dev/null && ssh gpu8 'grep -m4 EAGLE3_DEBUG /var/log/sglang/kimi-eagle3-debug.log'",
           "[EAGLE3_DEBUG] aux (37, 21504) norms [131.62, 41.3, 88.91] cos01 0.312\n"
           "[EAGLE3_DEBUG] aux (6, 21504) norms [131.88, 41.52, 89.07] cos01 0.305\n"
           "[EAGLE3_DEBUG] aux (6, 21504) norms [132.04, 41.47, 89.2] cos01 0.309\n"
           "[EAGLE3_DEBUG] aux (6, 21504) norms [131.71, 41.38, 88.96] cos01 0.311",
           description="Send one request and read the debug lines", seconds=6.2)
    a.end()
    a = s.assistant()
    a.think("Shape is right: 3 x 7168 = 21504. Chunks 1 and 2 have the norms of layers 3 and "
            "31 in the training captures (40.9 and 87.5). Chunk 0 should be the embedding with "
            "a norm around 0.83, but it is 131.6, larger than anything we capture. That looks "
            "like the end of the residual stream. The patch appends `hidden_states` itself for "
            "layer -1. At layer 0 the decoder layer uses that same tensor as `residual`, and "
            "the fused add-RMSNorm updates `residual` in place in every layer, so the list "
            "ends up holding the final residual instead of the embedding. The other captures "
            "are built as `hidden_states + residual`, new tensors, which is why they are fine.",
           seconds=14.2)
    a.bash("python -c \"import json; print(json.load(open('stats/capture_norms.json')))\"",
           "{'embed': 0.83, 'layer3': 40.9, 'layer31': 87.5, 'final_residual': 130.4}",
           description="Training-time norms of each captured slot", seconds=0.3, workdir=HS_DIR)
    a.say("Found it. The debug print shows:\n\n"
          "| slot | expected (training) | served |\n|---|---|---|\n"
          "| 0: embedding | 0.83 | **131.6** |\n"
          "| 1: after layer 2 | 40.9 | 41.3 |\n"
          "| 2: after layer 30 | 87.5 | 88.9 |\n\n"
          "Slot 0 has the norm of the *final* residual stream (130.4 in training stats), not "
          "of the embedding. Cause: the patch appends the embedding tensor by reference. In "
          "layer 0 that same tensor becomes `residual`, and the fused add-RMSNorm adds into "
          "`residual` in place in every later layer, so by the time the draft reads the list, "
          "slot 0 holds the last residual. Layers 3 and 31 are captured as `hidden_states + "
          "residual`, which allocates a new tensor, so they survive.\n\n"
          "Fix: append `hidden_states.clone()` for the embedding slot. One extra 7168-wide "
          "copy per forward, negligible next to the MoE layers.")
    a.end("stop")
    s.pause(1 * 60 + 47.0)
    s.user("good catch. patch it and rerun the bench")

    # --- the fix and the benchmark (msgs 4512-4516)
    a = s.assistant()
    a.bash("ssh gpu8 \"cd /opt/sglang && sed -i 's/            aux_hidden_states.append("
           "hidden_states)$/            aux_hidden_states.append(hidden_states.clone())/' "
           "python/sglang/srt/models/deepseek_v2.py && grep -n 'append(hidden_states.clone())' "
           "python/sglang/srt/models/deepseek_v2.py\"",
           "2296:            aux_hidden_states.append(hidden_states.clone())",
           description="Capture a copy of the embedding output", seconds=0.7)
    a.end()
    a = s.assistant()
    a.bash("ssh gpu8 'pkill -f sglang.launch_server; sleep 10; cd /opt/sglang && EAGLE3_DEBUG=1 "
           "nohup " + HS_SERVER_CMD + " > /var/log/sglang/kimi-eagle3.log 2>&1 & echo started'",
           "started", description="Restart the server with the fix", seconds=11.8)
    a.end()
    a = s.assistant()
    a.bash("sleep 720; ssh gpu8 'grep -m2 EAGLE3_DEBUG /var/log/sglang/kimi-eagle3.log; "
           "tail -n 1 /var/log/sglang/kimi-eagle3.log'",
           "[EAGLE3_DEBUG] aux (8, 21504) norms [0.84, 41.12, 88.4] cos01 0.021\n"
           "[EAGLE3_DEBUG] aux (1, 21504) norms [0.81, 40.96, 88.17] cos01 0.018\n"
           "[2026-02-12 09:27:40] The server is fired up and ready to roll!",
           description="Wait for the server and check the embedding slot", seconds=720.2,
           timeout=900000)
    a.end()
    a = s.assistant()
    a.bash("python bench/accept_len.py --url http://gpu8:30000 --prompts bench/prompts_40.jsonl "
           "--max-tokens 512",
           "prompts        40\n"
           "output tokens  20,480\n"
           "mean accept    3.52 / 6 draft tokens\n"
           "per-token acc  0.722\n"
           "decode tok/s   71.4 (single stream)\n"
           "baseline tok/s 31.2 (no speculation, from bench/results/baseline.json)",
           description="Measure acceptance length with the fix", seconds=176.9, timeout=600000,
           workdir=HS_DIR)
    a.end()
    a = s.assistant()
    a.say("Fixed.\n\n"
          "- Slot 0 now carries the embedding (norm 0.81-0.84, unrelated to slot 1).\n"
          "- Accept length 3.52 of 6 draft tokens (was 1.82), per-token acceptance 72.2% "
          "against 74.4% offline, so serving now matches training within noise.\n"
          "- Single-stream decode 71.4 tok/s, 2.3x the no-speculation baseline (31.2).\n\n"
          "The debug print is still in `llama_eagle3.py` but only fires with `EAGLE3_DEBUG` "
          "set. Next I'd turn the two SGLang changes into one clean commit on the server "
          "checkout and rerun the 40-prompt bench with batch sizes 4 and 16.")
    a.end("stop")
    return s.export()


HS_SUMMARY = prose("""# Where we are: EAGLE-3 draft for Kimi-K2.5 (INT4) served by SGLang

## Goal
Serve Kimi-K2.5 INT4 with EAGLE-3 speculative decoding on the 8x RTX PRO 6000 Blackwell box
  (`gpu8`) and get an acceptance length close to what the draft achieves offline (about 3.5 of 6
  draft tokens), i.e. roughly double single-stream decode speed.

## Hardware & environment
- `gpu8`: 8x RTX PRO 6000 Blackwell (96 GB each), PCIe only, no NVLink. SGLang runs with `--tp
  8`.
- SGLang is an editable checkout in `/opt/sglang`; local modifications are uncommitted (`git
  diff` shows them).
- Server command: `launch_server --model-path /models/Kimi-K2.5-INT4 --tp 8
  --speculative-algorithm EAGLE3 --speculative-draft-model-path /models/kimi-k25-eagle3-v2
  --speculative-num-steps 5 --speculative-eagle-topk 1 --speculative-num-draft-tokens 6
  --mem-fraction-static 0.88 --port 30000`. Loading takes about 12 minutes.
- Logs: `/var/log/sglang/kimi-eagle3.log` on `gpu8`.

## Model facts
- Target: 61 layers, hidden size 7168, MLA attention, MoE blocks; SGLang implements it in
  `deepseek_v2.py`.
- Draft: one Llama-style decoder layer (`LlamaForCausalLMEagle3`) with an `fc` that maps the
  concatenated aux states (3 x 7168 = 21504) to 7168, 32k draft vocabulary.
- Draft quality offline: 74.7% top-1 on the held-out captures at the end of training; 74.4% per
  token over 6 chained steps on captures of the 40 benchmark prompts (expected accept length
  3.47).

## CRITICAL: hidden-state mismatch between training and SGLang inference (ROOT CAUSE FOUND)
Training (`train/capture_hidden.py`) builds the draft input from HF `hidden_states[0, 3, 31]`:
  the embedding output, the output of layer 2 and the output of layer 30, concatenated in that
  order.

SGLang's default for EAGLE-3 captures `[2, num_layers // 2, num_layers - 3] = [2, 30, 58]`, and
  it shifts every id by one because it records the input of layer `id + 1`. So out of the box
  the draft received [after layer 2, after layer 30, after layer 57]: the embedding slot was
  missing and every slot was shifted by one position. Trained on one layout and fed another, the
  draft dropped from 74.7% to about 34% per token.

## What has been changed so far
1. `deepseek_v2.py`: a draft config may now name layer `-1`; it sets `capture_embedding` and the
  model appends the embedding output before the first layer. The remaining ids are shifted by
  one as before.
2. Draft `config.json`: `eagle_aux_hidden_state_layer_ids` changed from `[2, 30, 58]` to `[-1,
  2, 30]`. The server log confirms it captures `[0, 3, 31]` with 0 as the embedding.
3. `llama_eagle3.py`: debug print behind `EAGLE3_DEBUG`, showing the aux shape, the mean norm of
  each 7168-wide chunk, and the cosine similarity of chunks 0 and 1.

## Current status
- Server is up with changes 1 and 2 (started 01:38, ready 01:51), but **not** with the debug
  print: the print was added after that start.
- Benchmark this morning: accept length 1.82 of 6, 30.1% per token, 38.6 tok/s vs 31.2 without
  speculation. No improvement from the layer-id fix.
- Offline the same draft does 74.4% on HF captures of the same prompts, so the weights are fine:
  the served inputs still differ from the trained ones in some way the config doesn't show.

## Immediate next steps
1. Stop the running server and wait until all GPUs report only a few MiB.
2. Start it again with `EAGLE3_DEBUG=1` and the same command, logging to a separate debug log.
3. Send one short chat request and read the `[EAGLE3_DEBUG]` lines: shape should be `(n,
  21504)`; chunk norms should be close to the training norms in `stats/capture_norms.json`
  (embedding 0.83, layer 3 40.9, layer 31 87.5).
4. If a slot's norm is off, trace where that slot is produced in `deepseek_v2.py` (capture
  point, dtype, in-place updates, TP reduction).
5. Fix it, restart without the debug variable or leave the print in (it is off by default).
6. Rerun `bench/accept_len.py` on the 40 prompts and compare with 3.47 expected; if it matches,
  benchmark batch sizes 4 and 16.

## Already ruled out
- Draft weights or training quality (offline 74.4%).
- Draft vocabulary mapping (`d2t`/`t2d` tables load; offline eval uses the same mapping).
- Wrong draft config being loaded (server log prints `[-1, 2, 30]`).
- CUDA graphs: the numbers were the same with `--disable-cuda-graph` last week.

## Key files
- `gpu8:/opt/sglang/python/sglang/srt/models/deepseek_v2.py`: capture logic
  (`layers_to_capture`, `capture_embedding`, the loop over layers).
- `gpu8:/opt/sglang/python/sglang/srt/models/llama_eagle3.py`: draft forward, `fc` on the
  concatenated aux states, debug print.
- `gpu8:/models/kimi-k25-eagle3-v2/config.json`: draft config with the aux layer ids.
- `train/capture_hidden.py`: training-time capture (`CAPTURE = (0, 3, 31)`).
- `eval/offline_draft.py`, `captures/bench40/`: offline check of the draft on HF captures.
- `bench/accept_len.py`, `bench/prompts_40.jsonl`, `bench/results/baseline.json`: acceptance
  benchmark and baseline.
- `stats/capture_norms.json`: mean L2 norm per captured slot in the training data.""")
