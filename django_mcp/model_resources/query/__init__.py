"""
Safe ad-hoc queries across a site's model resources (:class:`~.tool.ModelQueryTool`): a JSON query
document, never SQL, checked against what each resource exposes and filtered by each resource's
queryset for the user through every relation (docs/howto/query-your-models.md).
"""
