"""Tests of the drivers' shared start-up (experiments.cli)."""

import os
import subprocess
import sys
import textwrap

import pytest

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


@pytest.mark.parametrize("kind, message", [
    ("binary", "the flag file is not UTF-8 text (byte 0xe4 at offset 6)"),
    ("fifo", "the flag file is a named pipe, not a file"),
    ("directory", "the flag file is a directory, not a file"),
    ("device", "the flag file is a device or socket, not a file"),
    ("huge", "2,097,152 bytes, more than a flag file holds (1,048,576)"),
    ("nested", "the flag file is not UTF-8 text (byte 0xe4 at offset 6)"),
])
def test_a_flag_file_absl_cannot_read_is_named(tmp_path, kind, message):
  # absl read /dev/zero until memory ended (22 GB), waited on a pipe, and
  # raised UnicodeDecodeError on other bytes.
  from absl import flags  # pylint: disable=g-import-not-at-top
  from experiments import cli  # pylint: disable=g-import-not-at-top
  binary = tmp_path / "binary.flags"
  binary.write_bytes(b"--seed\xe4=1\n")
  paths = {"binary": binary, "directory": tmp_path, "device": "/dev/zero"}
  if kind == "fifo":
    paths["fifo"] = tmp_path / "fifo"
    os.mkfifo(paths["fifo"])
  elif kind == "huge":
    paths["huge"] = tmp_path / "huge.flags"
    paths["huge"].write_text("-" * (2 << 20))
  elif kind == "nested":
    paths["nested"] = tmp_path / "nested.flags"
    paths["nested"].write_text(f"--flagfile={binary}\n")
  with pytest.raises(flags.Error) as refused:
    cli.check_flag_files(["--num_users=10", f"--flagfile={paths[kind]}"])
  where = binary if kind == "nested" else paths[kind]
  assert str(refused.value) == f"--flagfile={where}: {message}"


def test_readable_flag_files_pass(tmp_path):
  from experiments import cli  # pylint: disable=g-import-not-at-top
  good = tmp_path / "good.flags"
  good.write_text("--num_users=1000\n--epsilon=2\n")
  cli.check_flag_files(["--flagfile", str(good)])
