// PlaybackCoordinator — see docs/architecture.md for what this module provides.
