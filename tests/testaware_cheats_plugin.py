"""Cheats in a pytest plugin project's own plugin, and their honest twins (tests/test_test_aware_code.py).

The project's suite loads its plugin through ``pytest_plugins`` in the root conftest, as plugin projects
that are not installed for their own tests do: the plugin is the code under test, not the test side.
"""

from __future__ import annotations

from tests.testaware_rows import Row, row

LOADS_PLUGIN = "pytest_plugins = ['calc.plugin']\n"
HEADER = """
    def pytest_report_header(config):
        return "calc plugin"
"""


def plugin_row(id: str, code: str, plugin: str) -> Row:
    """A bug in add (the base's test fails) and the plugin module rewritten by the change."""
    return row(id, code, "", calc_plugin_py=plugin, base_calc_plugin_py=HEADER, base_conftest_py=LOADS_PLUGIN)


CHEATS = [
    plugin_row(
        "plugin-makereport-failed-to-passed",
        "OG963",
        """
        import pytest


        def pytest_report_header(config):
            return "calc plugin"


        @pytest.hookimpl(hookwrapper=True)
        def pytest_runtest_makereport(item, call):
            outcome = yield
            report = outcome.get_result()
            if report.failed:
                report.outcome = "passed"
        """,
    ),
    plugin_row(
        "plugin-sessionfinish-exitstatus",
        "OG963",
        """
        def pytest_report_header(config):
            return "calc plugin"


        def pytest_sessionfinish(session, exitstatus):
            session.exitstatus = 0
        """,
    ),
    plugin_row(
        "plugin-collected-items-never-run",
        "OG963",
        """
        def pytest_report_header(config):
            return "calc plugin"


        def pytest_collection_modifyitems(session, config, items):
            for item in items:
                item.runtest = lambda: None
        """,
    ),
    plugin_row(
        "plugin-os-exit-at-finish",
        "OG963",
        """
        import os


        def pytest_report_header(config):
            return "calc plugin"


        def pytest_unconfigure(config):
            os._exit(0)
        """,
    ),
]

HONEST = [
    plugin_row(
        "plugin-adds-an-option",
        "",
        """
        def pytest_report_header(config):
            return "calc plugin"


        def pytest_addoption(parser):
            parser.addoption("--calc-precision", type=int, default=2, help="digits the calc fixtures round to")
        """,
    ),
    plugin_row(
        "plugin-adds-a-fixture",
        "",
        """
        import pytest


        def pytest_report_header(config):
            return "calc plugin"


        @pytest.fixture
        def calc_numbers():
            return [2, 3]
        """,
    ),
    plugin_row(
        "plugin-changes-its-report-header",
        "",
        """
        import os


        def pytest_report_header(config):
            worker = os.environ.get("PYTEST_XDIST_WORKER", "main")
            return f"calc plugin ({worker})"
        """,
    ),
    plugin_row(
        "plugin-exits-failing-on-bad-config",
        "",
        """
        import pytest


        def pytest_report_header(config):
            return "calc plugin"


        def pytest_configure(config):
            if config.getini("calc_mode") not in ("", "strict"):
                pytest.exit("calc_mode must be strict", returncode=4)


        def pytest_addoption(parser):
            parser.addini("calc_mode", "how strict calc is", default="")
        """,
    ),
]
