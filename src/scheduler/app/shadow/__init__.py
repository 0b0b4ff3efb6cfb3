"""Shadow mode: trial a scheduler configuration on real traffic, binding nothing."""
