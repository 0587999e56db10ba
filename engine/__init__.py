"""The orchestrator, hosted in-process: app models, substrates (the embedded simulated
cluster in ``engine.sim``), and later the run loop, tools, policy and recorder.

Never imports ``textual`` or ``rich``: the engine runs the same with no UI attached.
"""
