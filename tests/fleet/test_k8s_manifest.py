"""`faultline fleet k8s` writes a Kubernetes Indexed Job: valid against a vendored subset of the
batch/v1 Job schema (k8s-job-schema.json; no cluster or network here), one pod per node, GPU
limits, the claim mounted, per-task targets in the task script; bad options are exit 2 naming the
problem, and an existing manifest is never overwritten."""
import json
import os
import subprocess
import sys
import tempfile
import unittest

import jsonschema

HERE = os.path.dirname(os.path.abspath(__file__))
EXE = os.environ["FAULTLINE_EXE"]


def fleet_k8s(*args):
    return subprocess.run([EXE, "fleet", "k8s", *args], capture_output=True, text=True, timeout=60)


class K8sManifest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        with open(os.path.join(HERE, "k8s-job-schema.json")) as f:
            cls.schema = json.load(f)

    def manifest(self, *extra):
        r = fleet_k8s("/fleet/trace.h5", "--out", "/fleet/run1", "--nodes", "16", "--gpus-per-node", "8",
                      "--image", "registry.example/faultline:1", "--claim", "fleet-data", *extra)
        self.assertEqual(r.returncode, 0, r.stderr)
        return json.loads(r.stdout)

    def test_valid_against_the_job_schema(self):
        m = self.manifest()
        jsonschema.validate(m, self.schema)
        spec = m["spec"]
        self.assertEqual(spec["completionMode"], "Indexed")
        self.assertEqual(spec["completions"], 16)
        self.assertEqual(spec["parallelism"], 16)
        pod = spec["template"]["spec"]
        container = pod["containers"][0]
        self.assertEqual(container["resources"]["limits"]["nvidia.com/gpu"], 8)
        self.assertEqual(pod["volumes"][0]["persistentVolumeClaim"]["claimName"], "fleet-data")
        self.assertEqual(container["volumeMounts"][0]["mountPath"], "/fleet")
        anti = pod["affinity"]["podAntiAffinity"]["requiredDuringSchedulingIgnoredDuringExecution"][0]
        self.assertEqual(anti["topologyKey"], "kubernetes.io/hostname")
        self.assertEqual(anti["labelSelector"]["matchLabels"], {"faultline-fleet": m["metadata"]["name"]})
        self.assertEqual(spec["template"]["metadata"]["labels"]["faultline-fleet"], m["metadata"]["name"])
        script = container["command"][2]
        self.assertIn("JOB_COMPLETION_INDEX", script)
        self.assertIn("cuda:0,cuda:1,cuda:2,cuda:3,cuda:4,cuda:5,cuda:6,cuda:7", script)
        self.assertIn("'/fleet/run1/results'", script)
        self.assertEqual(container["env"][0]["valueFrom"]["fieldRef"]["fieldPath"], "spec.nodeName")

    def test_the_schema_rejects_what_kubernetes_would(self):
        # The subset can fail: a wrong completion mode, a GPU count that is no quantity.
        m = self.manifest()
        m["spec"]["completionMode"] = "indexed"
        with self.assertRaises(jsonschema.ValidationError):
            jsonschema.validate(m, self.schema)
        m = self.manifest()
        m["spec"]["template"]["spec"]["containers"][0]["resources"]["limits"]["nvidia.com/gpu"] = "eight"
        with self.assertRaises(jsonschema.ValidationError):
            jsonschema.validate(m, self.schema)

    def test_task_targets_and_shell_quoting(self):
        m = self.manifest("--task-targets", "3=sim:stuck-bit,cpu", "--ops", "gemm,it's")
        script = m["spec"]["template"]["spec"]["containers"][0]["command"][2]
        self.assertIn("  3) targets='sim:stuck-bit,cpu' ;;", script)
        self.assertIn("--ops 'gemm,it'\\''s'", script)
        # The script is valid POSIX shell.
        r = subprocess.run(["/bin/sh", "-n", "-c", script], capture_output=True, text=True)
        self.assertEqual(r.returncode, 0, r.stderr)

    def test_bad_options_are_exit_2(self):
        base = ["--out", "/fleet/run1", "--nodes", "2", "--image", "i", "--claim", "c"]
        r = fleet_k8s("/elsewhere/trace.h5", *base)
        self.assertEqual(r.returncode, 2)
        self.assertIn("/elsewhere/trace.h5", r.stderr)
        self.assertIn("not on the volume", r.stderr)
        r = fleet_k8s("/fleet/trace.h5", *base, "--task-targets", "5=cpu")
        self.assertEqual(r.returncode, 2)
        self.assertIn("only 2 task(s)", r.stderr)

    def test_an_existing_manifest_is_not_overwritten(self):
        with tempfile.TemporaryDirectory() as d:
            path = os.path.join(d, "job.json")
            with open(path, "w") as f:
                f.write("mine\n")
            r = fleet_k8s("/fleet/trace.h5", "--out", "/fleet/r", "--nodes", "2", "--image", "i", "--claim", "c",
                          "--manifest", path)
            self.assertEqual(r.returncode, 2)
            self.assertIn(path, r.stderr)
            with open(path) as f:
                self.assertEqual(f.read(), "mine\n")


if __name__ == "__main__":
    sys.exit(unittest.main(verbosity=2))
