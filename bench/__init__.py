"""Load benchmark of the real server (`make bench`) and the helper that starts it."""
