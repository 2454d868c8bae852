"""
A small company for the query tool's tests: regions, departments (a hidden budget), employees (a
hidden salary, a manager, skills), projects (some confidential), assignments, and badges (published
but not queryable).
"""

from django.db import models


class Region(models.Model):
    name = models.CharField(max_length=50, unique=True)


class Department(models.Model):
    name = models.CharField(max_length=50)
    code = models.CharField(max_length=10, unique=True)
    region = models.ForeignKey(Region, null=True, blank=True, related_name="departments", on_delete=models.SET_NULL)
    budget = models.DecimalField(max_digits=10, decimal_places=2, default=0)


class Skill(models.Model):
    name = models.CharField(max_length=50, unique=True)


class Employee(models.Model):
    name = models.CharField(max_length=50)
    department = models.ForeignKey(Department, related_name="employees", on_delete=models.CASCADE)
    manager = models.ForeignKey("self", null=True, blank=True, related_name="reports", on_delete=models.SET_NULL)
    level = models.PositiveIntegerField()
    salary = models.PositiveIntegerField()
    hired = models.DateField()
    active = models.BooleanField(default=True)
    rating = models.FloatField(null=True, blank=True)
    skills = models.ManyToManyField(Skill, blank=True, related_name="employees")


class Project(models.Model):
    title = models.CharField(max_length=80)
    department = models.ForeignKey(Department, null=True, blank=True, related_name="projects",
                                   on_delete=models.SET_NULL)
    confidential = models.BooleanField(default=False)
    cost = models.DecimalField(max_digits=10, decimal_places=2)
    started = models.DateField(null=True, blank=True)


class Assignment(models.Model):
    employee = models.ForeignKey(Employee, related_name="assignments", on_delete=models.CASCADE)
    project = models.ForeignKey(Project, related_name="assignments", on_delete=models.CASCADE)
    hours = models.PositiveIntegerField()
    since = models.DateTimeField()


class Badge(models.Model):
    employee = models.ForeignKey(Employee, related_name="badges", on_delete=models.CASCADE)
    code = models.CharField(max_length=20)
