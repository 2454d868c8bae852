"""
The data and users of the query tool's tests (the ``tests.querying`` schema), made the same way
for the in-process tests, the property test and the live servers.
"""

import datetime
import random
from decimal import Decimal

from django.contrib.auth import get_user_model
from django.contrib.auth.models import Permission
from django.utils import timezone

from tests.querying.models import Assignment, Badge, Department, Employee, Project, Region, Skill

VIEW_ALL = ["view_region", "view_skill", "view_department", "view_employee", "view_project", "view_assignment"]


def make_company(seed: int = 7) -> None:
    """Regions, departments, skills, employees, projects and assignments, with nulls and hidden rows."""
    rng = random.Random(seed)
    regions = [Region.objects.create(name=name) for name in ("North", "South", "East")]
    departments = [Department.objects.create(name=name, code=f"D{index}", region=regions[index % 3] if index < 4 else None,
                                             budget=Decimal(1000 * (index + 1)))
                   for index, name in enumerate(["Sales", "Support", "Research", "Legal", "Ops"])]
    skills = [Skill.objects.create(name=name) for name in ("python", "sql", "design", "law")]
    employees: list[Employee] = []
    for index in range(24):
        employee = Employee.objects.create(
            name=f"E{index:02d}", department=departments[index % 5], level=1 + index % 6,
            manager=employees[index // 3] if index >= 3 and index % 4 else None, salary=30000 + 1000 * index,
            hired=datetime.date(2015 + index % 9, 1 + index % 12, 1 + index % 27), active=index % 7 != 0,
            rating=None if index % 5 == 0 else round(rng.uniform(1, 5), 1))
        employee.skills.set(rng.sample(skills, index % 3))
        employees.append(employee)
    projects = [Project.objects.create(title=f"P{index}", department=departments[index % 5] if index % 4 else None,
                                       confidential=index % 3 == 0, cost=Decimal(f"{100 + 37 * index}.50"),
                                       started=datetime.date(2020 + index % 5, 1 + index % 12, 1) if index % 2 else None)
                for index in range(9)]
    start = timezone.make_aware(datetime.datetime(2026, 1, 5, 9, 0))
    for index in range(40):
        Assignment.objects.create(employee=employees[rng.randrange(24)], project=projects[rng.randrange(9)],
                                  hours=rng.choice([5, 10, 20, 29, 30, 40]),
                                  since=start + datetime.timedelta(days=7 * index, hours=index % 9))
    for employee in employees[:6]:
        Badge.objects.create(employee=employee, code=f"B{employee.pk}")


def make_users() -> dict[str, object]:
    """``boss`` (staff, every permission), ``clerk`` (no departments, no confidential projects), ``guest``."""
    users = {}
    model = get_user_model()
    boss = model.objects.create_user("boss", is_staff=True)
    boss.user_permissions.add(*Permission.objects.filter(content_type__app_label="querying",
                                                         codename__in=[*VIEW_ALL, "change_project"]))
    clerk = model.objects.create_user("clerk")
    clerk.user_permissions.add(*Permission.objects.filter(
        content_type__app_label="querying", codename__in=[c for c in VIEW_ALL if c != "view_department"]))
    users["boss"], users["clerk"] = boss, clerk
    users["guest"] = model.objects.create_user("guest")
    return users
