"""Story 6, support-bot (generic chat JSON)."""

from __future__ import annotations

import json

from samples.common import BASE62, Chance, Json


def _call(chance: Chance, name: str, arguments: Json) -> Json:
    return {"id": "call_" + chance.chars(BASE62, 24), "type": "function",
            "function": {"name": name, "arguments": json.dumps(arguments)}}


def support_bot() -> Json:
    """An OpenAI-style chat of 22 messages with tool calls and one empty assistant reply."""
    chance = Chance(1515)
    order = _call(chance, "lookup_order", {"order_id": "SW-48213"})
    shipping = _call(chance, "get_shipping_status", {"tracking_number": "1Z84F2A10391224871"})
    note = _call(chance, "update_delivery_note", {
        "order_id": "SW-48213",
        "note": "Flat 3B, 14 Dunmore Road. Buzzer works; ring 3B. Customer confirmed address."})
    previous = _call(chance, "lookup_order", {"order_id": "SW-47730"})
    policy = _call(chance, "search_kb", {"query": "return policy accessories defective"})
    rma = _call(chance, "create_return", {"order_id": "SW-47730", "sku": "ACC-BELL-BR22",
                                          "quantity": 1, "reason": "defective"})

    def tool(call: Json, content: Json) -> Json:
        return {"role": "tool", "tool_call_id": call["id"], "content": json.dumps(content)}

    messages: list[Json] = [
        {"role": "system", "content": (
            "You are the customer support assistant for Spokewise Cycles, an online bike shop. "
            "Be brief and concrete. Use the tools to look things up instead of guessing; never "
            "invent order details, dates or policies. Returns: 30 days for unused items, 2 years "
            "for defects. Escalate to a human for refunds above 300 EUR.")},
        {"role": "user", "content": "hi, my order SW-48213 should have arrived on friday and "
                                    "nothing has shown up"},
        {"role": "assistant", "content": None, "tool_calls": [order]},
        tool(order, {"order_id": "SW-48213", "placed": "2026-05-12", "status": "shipped",
                     "carrier": "UPS", "tracking_number": "1Z84F2A10391224871",
                     "promised_delivery": "2026-05-15",
                     "items": [{"sku": "TIR-GP5K-700x28", "name": "Grand Prix 5000 700x28C",
                                "quantity": 2}],
                     "ship_to": "Flat 3B, 14 Dunmore Road, Leeds LS6 2AB"}),
        {"role": "assistant", "content": None, "tool_calls": [shipping]},
        tool(shipping, {"tracking_number": "1Z84F2A10391224871", "status": "exception",
                        "last_event": "2026-05-15T17:42:00+01:00",
                        "detail": "Delivery attempted - access to building not possible. "
                                  "Held at Leeds depot.",
                        "next_attempt": "2026-05-19"}),
        {"role": "assistant", "content": (
            "Thanks for waiting. UPS tried to deliver on Friday 15 May at 17:42 but couldn't "
            "get into the building, so the parcel (two Grand Prix 5000 700x28C tyres) is held "
            "at their Leeds depot. The next attempt is scheduled for Tuesday 19 May.\n\n"
            "The address on the order is Flat 3B, 14 Dunmore Road, Leeds LS6 2AB. Is that "
            "right, and is there anything the driver should know to get in?")},
        {"role": "user", "content": "yes that's right. the buzzer works fine, they just have to "
                                    "ring 3B"},
        {"role": "assistant", "content": None, "tool_calls": [note]},
        tool(note, {"ok": True, "order_id": "SW-48213", "carrier_notified": True}),
        {"role": "assistant", "content": (
            "Done: I've added a delivery note for the driver (\"ring 3B, buzzer works\") and UPS "
            "has it for Tuesday's attempt. If Tuesday fails too, reply here and I'll arrange "
            "collection from the depot or a free redelivery.")},
        {"role": "user", "content": "ok thanks. also the bell from my last order is broken, the "
                                    "striker came off after a week. can I send it back?"},
        {"role": "assistant", "content": None, "tool_calls": [previous, policy]},
        tool(previous, {"order_id": "SW-47730", "placed": "2026-04-28", "delivered": "2026-04-30",
                        "items": [{"sku": "ACC-BELL-BR22", "name": "Brass bell 22 mm",
                                   "quantity": 1, "price_eur": 14.9}]}),
        tool(policy, {"results": [{"title": "Returning faulty accessories", "excerpt": (
            "Defective items can be returned within 2 years of delivery. We email a prepaid "
            "label; refund or replacement is issued when the item arrives.")}]}),
        {"role": "assistant", "content": ""},
        {"role": "user", "content": "hello? are you still there?"},
        {"role": "assistant", "content": None, "tool_calls": [rma]},
        tool(rma, {"rma": "RMA-20931", "label_url": "https://returns.spokewise.example/RMA-20931",
                   "label_emailed_to": "on file", "resolution": "replacement or refund"}),
        {"role": "assistant", "content": (
            "Sorry about that, I'm here. A bell whose striker falls off after a week counts as "
            "defective, and it's well within the 2-year window, so I've opened return "
            "RMA-20931 for the Brass bell 22 mm (order SW-47730). A prepaid label is on its way "
            "to your email. Once it arrives we'll send a replacement, or refund the 14.90 EUR "
            "if you prefer; just say which.")},
        {"role": "user", "content": "replacement please. thanks"},
        {"role": "assistant", "content": (
            "Noted on RMA-20931: replacement. You'll get a shipping confirmation when it goes "
            "out. Hope the tyres arrive smoothly on Tuesday.")},
    ]
    return {"messages": messages}


# ---------------------------------------------------------------------------------------------
