"""The replay screen's concern owners that draw nothing of their own: playback, search, live
growth and the turn's tools (raw view, copy, subagents, export).

Each is a hidden widget holding its own state, bindings and actions; the screen composes them,
lists their bindings as its own (`routing.routed`) and sends each key to its owner. An owner
reads the position from the screen it lives on and asks it to move (`ReplayScreen.go`); it
never calls the app.
"""
