"""Tests of the drivers' shared start-up (experiments.cli)."""

import os
import subprocess
import sys
import textwrap

from absl.testing import absltest
from absl.testing import parameterized

_ROOT = os.path.dirname(os.path.dirname(os.path.dirname(
    os.path.abspath(__file__))))

# A driver whose main prints what quiet_libraries decided.
_DRIVER = textwrap.dedent("""
    import os, sys
    from absl import logging
    from experiments import cli

    def main(argv):
      del argv
      print(os.environ["TF_CPP_MIN_LOG_LEVEL"], os.environ["GRPC_VERBOSITY"],
            logging.get_verbosity())

    cli.run(main, sys.modules[__name__])
""")


class QuietLibrariesTest(parameterized.TestCase):

  @parameterized.named_parameters(
      ("default", [], "3 ERROR"),
      ("verbosity_zero", ["--verbosity=0"], "0 INFO"),
      ("short_flag", ["-v", "1"], "0 INFO"),
      ("verbosity_negative", ["--verbosity=-1"], "3 ERROR"))
  def test_tensorflow_logs_follow_the_command_line(self, args, want):
    env = {k: v for k, v in os.environ.items()
           if k not in ("TF_CPP_MIN_LOG_LEVEL", "GRPC_VERBOSITY")}
    env["PYTHONPATH"] = _ROOT + os.pathsep + env.get("PYTHONPATH", "")
    done = subprocess.run([sys.executable, "-c", _DRIVER, *args],
                          capture_output=True, text=True, env=env,
                          timeout=120, check=False)
    self.assertEqual(done.returncode, 0, done.stderr)
    levels = done.stdout.split()
    self.assertEqual(" ".join(levels[:2]), want)
    # absl's own level: WARNING (-1) when quiet, the flag's value otherwise.
    self.assertEqual(int(levels[2]) < 0, want.startswith("3"))


class FlagFileTest(absltest.TestCase):

  def test_a_missing_flag_file_is_named_in_one_line(self):
    missing = os.path.join(_ROOT, "no-such-dir", "absent.flags")
    proc = subprocess.run(
        [sys.executable, "-m", "experiments.theory_tables",
         f"--flagfile={missing}"], cwd=_ROOT, capture_output=True, text=True,
        check=False)
    self.assertEqual(proc.returncode, 1)
    self.assertEqual(proc.stderr.strip(),
                     f"error: --flagfile={missing}: the flag file cannot be "
                     "read (no such file or directory)")


if __name__ == "__main__":
  absltest.main()


def test_command_line_quotes_the_arguments_as_a_shell_needs(monkeypatch):
  from experiments import cli  # pylint: disable=g-import-not-at-top
  monkeypatch.setattr(sys, "argv", ["field.py", "--users=1e4",
                                    "--report_dir=my reports"])
  assert cli.command_line("experiments.field") == (
      "python -m experiments.field --users=1e4 '--report_dir=my reports'")
  monkeypatch.setattr(sys, "argv", ["field.py"])
  assert cli.command_line("experiments.field") == (
      "python -m experiments.field")
