"""Profiles of the running process for `/debug/pprof`, in pprof's format."""
