"""Who may call the secure port: delegated authentication and authorization, as kube-scheduler.

A request is first authenticated (front-proxy headers, client certificate, bearer token through
TokenReview, else anonymous), then authorized (privileged groups, always-allowed paths, else a
SubjectAccessReview). Both kinds of review go to the API server through the cluster port.
"""
