"""What the resource plugins (NodeResourcesFit, NodeResourcesBalancedAllocation) share, as
upstream's noderesources package shares one resource allocation scorer between them: the
scheduler's resource-name classes, the scored resources with their weights, and the per-node
and per-row allocation inputs of the scoring strategies."""
