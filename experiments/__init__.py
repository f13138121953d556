"""Flag-configured experiment drivers (one binary per experiment)."""
