"""
The query tool's test site: every model queryable but badges, each with its row-level rule.

- region, skill: anyone may query them;
- department: needs ``querying.view_department``; its budget is not exposed;
- employee: ``view_employee``; staff see everyone, others levels 1 to 3; the salary is not exposed;
- project: ``view_project``; confidential projects only with ``querying.change_project``;
- assignment: ``view_assignment``; staff see all, others those under 30 hours;
- badge: published, not queryable.
"""

from django_mcp.model_resources import ModelQueryTool, ModelResource
from django_mcp.permissions import AllowAny
from django_mcp.sites import McpSite

from .models import Assignment, Badge, Department, Employee, Project, Region, Skill

site = McpSite("querying")


class EmployeeResource(ModelResource):
    fields = ["name", "department", "manager", "level", "hired", "active", "rating", "skills"]
    queryable = True

    def get_queryset(self, ctx):
        rows = super().get_queryset(ctx)
        return rows if ctx.user.is_staff else rows.filter(level__lte=3)


class ProjectResource(ModelResource):
    fields = ["title", "department", "confidential", "cost", "started"]
    queryable = True

    def get_queryset(self, ctx):
        rows = super().get_queryset(ctx)
        return rows if ctx.user.has_perm("querying.change_project") else rows.filter(confidential=False)


class AssignmentResource(ModelResource):
    fields = ["employee", "project", "hours", "since"]
    queryable = True

    def get_queryset(self, ctx):
        rows = super().get_queryset(ctx)
        return rows if ctx.user.is_staff else rows.filter(hours__lt=30)


site.register(Region, fields=["name"], permission_classes=[AllowAny], queryable=True)
site.register(Skill, fields=["name"], permission_classes=[AllowAny], queryable=True)
site.register(Department, fields=["name", "code", "region"], queryable=True)
site.register(Employee, EmployeeResource)
site.register(Project, ProjectResource)
site.register(Assignment, AssignmentResource)
site.register(Badge, fields=["employee", "code"])
site.add(ModelQueryTool())
