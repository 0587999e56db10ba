"""The run: the orchestrator loop, its recorder, health sampling, replay and the seal's inputs."""
