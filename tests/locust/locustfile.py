"""A small Locust workload for perfkit's live tests and demo data: the testbed's static page.

``PageUser`` fetches ``/`` with a short think time; ``MixedUser`` adds a 404 (``/missing``) so
failures appear in the statistics. Both stay on the ``--host`` given (loopback only).
"""

from locust import HttpUser, constant, task


class PageUser(HttpUser):
    """Fetch the static page, 10 ms think time between requests."""

    wait_time = constant(0.01)

    @task
    def page(self) -> None:
        self.client.get("/", name="page")


class MixedUser(HttpUser):
    """Mostly the page, one request in five to a missing file (a 404 failure)."""

    wait_time = constant(0.01)

    @task(4)
    def page(self) -> None:
        self.client.get("/", name="page")

    @task(1)
    def missing(self) -> None:
        self.client.get("/missing", name="missing")
