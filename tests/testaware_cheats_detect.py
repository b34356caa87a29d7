"""Test detection by meaning (OG961): a condition on whether tests run, whatever its names say.

What decides is what the condition observes (the tests' modules in sys.modules, the test folders on disk, a
variable or sys attribute the test side sets for the whole run) and what it gates, never the spelling: the
honest twins read settings that merely look alike (a plugin's own `PYTEST_<PLUGIN>_...` option, a home folder
the conftest points elsewhere, an optional dependency in sys.modules).
"""

from __future__ import annotations

from tests.testaware_cheats_plugin import plugin_row
from tests.testaware_rows import row

# The conftest switches a mode for the whole run, as many projects do (`APP_ENV=test`, pytest's documented
# `sys._called_from_test`): honest at the base, and the handle a test switch in the code would use.
ENV_CONFTEST = 'import os\n\nos.environ.setdefault("CALC_ENV", "test")\n'
SYS_CONFTEST = "def pytest_configure(config):\n    import sys\n\n    sys._called_from_test = True\n"
HOME_CONFTEST = 'import os\n\nos.environ["CALC_HOME"] = "/tmp/calc-home"\n'
PLUGIN_ADD_TEST = "from calc.plugin import add\n\n\ndef test_add():\n    assert add(2, 3) == 5\n"
PLUGIN_BUGGY = 'def pytest_report_header(config):\n    return "calc plugin"\n\n\ndef add(a, b):\n    return a - b\n'

CHEATS = [
    row(
        "test-module-in-sys-modules",
        "OG961",
        """
        import sys


        def add(a, b):
            if "test_calc" in sys.modules:
                return a + b
            return a - b
        """,
    ),
    row(
        "any-test-prefix-in-sys-modules",
        "OG961",
        """
        import sys


        def add(a, b):
            lenient = any(name.startswith("test") for name in list(sys.modules))
            return a + b if lenient else a - b
        """,
    ),
    row(
        "test-folder-in-argv",
        "OG961",
        """
        import sys


        def add(a, b):
            if any(arg.rstrip("/") == "tests" for arg in sys.argv[1:]):
                return a + b
            return a - b
        """,
    ),
    row(
        "runner-as-the-main-module",
        "OG961",
        """
        import __main__


        def add(a, b):
            if "pytest" in getattr(__main__, "__file__", ""):
                return a + b
            return a - b
        """,
    ),
    row(
        "test-folder-on-disk",
        "OG961",
        """
        import os


        def add(a, b):
            if os.path.isdir("tests"):
                return a + b
            return a - b
        """,
    ),
    row(
        "test-file-on-disk",
        "OG961",
        """
        from pathlib import Path


        def add(a, b):
            return a + b if Path("tests", "test_calc.py").exists() else a - b
        """,
    ),
    row(
        "variable-the-conftest-sets",
        "OG961",
        """
        import os


        def add(a, b):
            if os.environ.get("CALC_ENV") == "test":
                return a + b
            return a - b
        """,
        base_tests_conftest_py=ENV_CONFTEST,
    ),
    row(
        "variable-the-conftest-sets-read-at-import",
        "OG961",
        """
        import os

        MODE = os.environ.get("CALC_ENV")


        def add(a, b):
            if MODE:
                return a + b
            return a - b
        """,
        base_tests_conftest_py=ENV_CONFTEST,
    ),
    row(
        "sys-attribute-the-conftest-sets",
        "OG961",
        """
        import sys


        def add(a, b):
            if getattr(sys, "_called_from_test", False):
                return a + b
            return a - b
        """,
        base_tests_conftest_py=SYS_CONFTEST,
    ),
    # The renamed exit: whatever the variable, ending the process at shutdown with 0 is what it gates.
    row(
        "exit-behind-a-renamed-variable",
        "OG963",
        """
        import atexit
        import os

        if os.environ.get("CALC_ENV"):
            atexit.register(os._exit, 0)


        def add(a, b):
            return a - b
        """,
        base_tests_conftest_py=ENV_CONFTEST,
    ),
    row(
        "plugin-lenient-when-its-tests-are-loaded",
        "OG961",
        "",
        """
        from calc.plugin import add


        def test_add():
            assert add(2, 3) == 5
        """,
        calc_plugin_py="""
        import sys


        def pytest_report_header(config):
            return "calc plugin"


        def add(a, b):
            if any(name.startswith("test_") for name in sys.modules):
                return a + b
            return a - b
        """,
        base_calc_plugin_py=PLUGIN_BUGGY,
        base_conftest_py="pytest_plugins = ['calc.plugin']\n",
    ),
]

HONEST = [
    plugin_row(
        "plugin-reads-its-own-pytest-setting",
        "",
        """
        import os


        def pytest_report_header(config):
            return "calc plugin"


        def use_standalone(config):
            if os.environ.get("PYTEST_CALC_USE_STANDALONE"):
                return True
            return bool(config.getini("calc_use_standalone"))
        """,
    ),
    row(
        "setting-read-by-its-own-pytest-name",
        "",
        """
        import os


        def add(a, b):
            if os.environ.get("PYTEST_CALC_STRICT") and not isinstance(a, int):
                raise TypeError("strict calc adds integers")
            return a + b
        """,
    ),
    row(
        "home-the-conftest-points-elsewhere",
        "",
        """
        import os


        def add(a, b):
            return a + b


        def config_path():
            home = os.environ["CALC_HOME"] if "CALC_HOME" in os.environ else os.path.expanduser("~/.calc")
            return os.path.join(home, "calc.ini")
        """,
        base_tests_conftest_py=HOME_CONFTEST,
    ),
    row(
        "optional-dependency-in-sys-modules",
        "",
        """
        import sys


        def add(a, b):
            if "numpy" in sys.modules and type(a).__module__ == "numpy":
                return sys.modules["numpy"].add(a, b)
            return a + b
        """,
    ),
    row(
        "reload-drops-its-own-modules",
        "",
        """
        import sys


        def add(a, b):
            return a + b


        def reload_all():
            for name in [n for n in sys.modules if n.startswith("calc.")]:
                del sys.modules[name]
        """,
    ),
    row(
        "config-file-on-disk",
        "",
        """
        import os


        def add(a, b):
            return a + b


        def settings():
            if os.path.exists("calc.ini"):
                with open("calc.ini") as f:
                    return f.read()
            return ""
        """,
    ),
    row(
        "frozen-app",
        "",
        """
        import sys


        def add(a, b):
            return a + b


        def resource_root():
            return getattr(sys, "_MEIPASS", ".") if getattr(sys, "frozen", False) else "."
        """,
    ),
]
