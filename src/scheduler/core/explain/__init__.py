"""Explaining a pod: the profile run plugin by plugin over a read-only snapshot of the cluster,
PostFilter planned but not carried out, and the nearest verified fixes. The command line and
its output live in `scheduler.app.explain`."""
