// Fleet jobs as text (core/fleet/FleetJob.h): the Slurm batch script's array and directives, the
// per-task targets, shell quoting, the Kubernetes Indexed Job, and the checks that refuse a job
// that would go wrong on the cluster.
#include <QProcess>
#include <QtTest>

#include "core/evidence/MinimalReproducer.h"
#include "core/fleet/FleetJob.h"
#include "core/fleet/NodeIdentity.h"

using namespace faultline;

namespace {

FleetJob sampleJob()
{
    FleetJob job;
    job.trace = "/shared/incident/trace.h5";
    job.outDir = "/shared/fleet/run 1";
    job.faultline = "/opt/faultline/bin/faultline";
    job.tasks = 4;
    job.gpusPerNode = 2;
    job.reps = 5;
    job.ops = "gemm";
    return job;
}

bool contains(const std::string& text, const std::string& what)
{
    return text.find(what) != std::string::npos;
}

}  // namespace

class TestFleetJob : public QObject {
    Q_OBJECT

private slots:
    void slurmScriptIsAnArrayWithOneNodePerTask()
    {
        const std::string s = slurmBatchScript(sampleJob());
        QVERIFY(s.rfind("#!/bin/sh\n", 0) == 0);
        QVERIFY(contains(s, "#SBATCH --array=0-3\n"));
        QVERIFY(contains(s, "#SBATCH --nodes=1\n"));
        QVERIFY(contains(s, "#SBATCH --exclusive\n"));
        QVERIFY(contains(s, "#SBATCH --gpus-per-node=2\n"));
        QVERIFY(contains(s, "#SBATCH --output=/shared/fleet/run 1/logs/%a.out\n"));
        QVERIFY(!contains(s, "--partition"));
        QVERIFY(contains(s, "SLURM_ARRAY_TASK_ID"));
        QVERIFY(contains(s, "targets='cuda:0,cuda:1'"));
        QVERIFY(contains(s, "'/opt/faultline/bin/faultline'"));
        QVERIFY(contains(s, "results='/shared/fleet/run 1/results'"));
        QVERIFY(contains(s, "--reps 5 --ops 'gemm'"));
        QVERIFY(contains(s, "--out \"$results/$task.h5\""));
        QVERIFY(contains(s, "--inventory \"$results/$task.devices.json\""));
        QVERIFY(contains(s, "echo \"$rc\" >\"$results/$task.exit\""));
        FleetJob job = sampleJob();
        job.partition = "gpu";
        QVERIFY(contains(slurmBatchScript(job), "#SBATCH --partition=gpu\n"));
    }

    void perTaskTargetsOverrideTheDefault()
    {
        FleetJob job = sampleJob();
        job.targets = "sim:healthy,cpu";
        job.taskTargets[2] = "sim:stuck-bit:bit=3,cpu";
        QCOMPARE(taskTargets(job, 0), std::string("sim:healthy,cpu"));
        QCOMPARE(taskTargets(job, 2), std::string("sim:stuck-bit:bit=3,cpu"));
        const std::string s = slurmBatchScript(job);
        QVERIFY(contains(s, "  2) targets='sim:stuck-bit:bit=3,cpu' ;;\n"));
        QVERIFY(contains(s, "  *) targets='sim:healthy,cpu' ;;\n"));
        // Simulated nodes ask for no GPUs; explicit cuda: targets do.
        QVERIFY(!contains(s, "--gpus-per-node"));
        QVERIFY(!asksForGpus(job));
        QVERIFY(validateSlurmJob(job).ok());
        job.targets = "cuda:0,cuda:1";
        QVERIFY(contains(slurmBatchScript(job), "#SBATCH --gpus-per-node=2\n"));
    }

    void theTaskScriptRunsUnderPosixShell()
    {
        // Executed for real with a stand-in faultline that records its arguments.
        QTemporaryDir dir;
        QVERIFY(dir.isValid());
        const QString fake = dir.filePath("fake-faultline");
        QFile f(fake);
        QVERIFY(f.open(QIODevice::WriteOnly));
        f.write(
            "#!/bin/sh\nif [ \"$1\" = devices ]; then echo '{}'; exit 0; fi\n"
            "printf '%s\\n' \"$@\" > \"$(dirname \"$0\")/args\"\nexit 1\n");
        f.close();
        QVERIFY(f.setPermissions(QFile::ReadOwner | QFile::WriteOwner | QFile::ExeOwner));
        FleetJob job = sampleJob();
        job.outDir = dir.filePath("fleet").toStdString();
        job.faultline = fake.toStdString();
        job.taskTargets[1] = "sim:nan";
        QProcess sh;
        QProcessEnvironment env = QProcessEnvironment::systemEnvironment();
        env.insert("TASK_INDEX", "1");
        sh.setProcessEnvironment(env);
        sh.start("/bin/sh", {"-c", QString::fromStdString(taskShellScript(job, "TASK_INDEX"))});
        QVERIFY(sh.waitForFinished(10000));
        QCOMPARE(sh.exitCode(), 0);  // replay's 1 (a target diverged) is a task that did its job
        QFile args(dir.filePath("args"));
        QVERIFY(args.open(QIODevice::ReadOnly));
        const QStringList a = QString::fromUtf8(args.readAll()).split('\n', Qt::SkipEmptyParts);
        QCOMPARE(a.value(0), QString("replay"));
        QCOMPARE(a.value(1), QString("/shared/incident/trace.h5"));
        QVERIFY(a.contains("sim:nan"));
        QVERIFY(a.contains(dir.filePath("fleet/results/1.h5")));
        QVERIFY(a.contains("--inventory"));
        QFile exitFile(dir.filePath("fleet/results/1.exit"));
        QVERIFY(exitFile.open(QIODevice::ReadOnly));
        QCOMPARE(exitFile.readAll().trimmed(), QByteArray("1"));
        // Without the task variable the script refuses to run.
        sh.setProcessEnvironment(QProcessEnvironment::systemEnvironment());
        sh.start("/bin/sh", {"-c", QString::fromStdString(taskShellScript(job, "TASK_INDEX_UNSET"))});
        QVERIFY(sh.waitForFinished(10000));
        QVERIFY(sh.exitCode() != 0);
    }

    void shellQuotingSurvivesQuotes()
    {
        QCOMPARE(shellQuote("a b"), std::string("'a b'"));
        QCOMPARE(shellQuote("it's"), std::string("'it'\\''s'"));
    }

    void badJobsAreRefusedWithTheReason()
    {
        FleetJob job = sampleJob();
        job.taskTargets[4] = "cpu";
        Status s = validateSlurmJob(job);
        QVERIFY(!s.ok());
        QVERIFY(contains(s.message(), "only 4 task(s)"));
        job = sampleJob();
        job.trace = "trace.h5";
        QVERIFY(contains(validateSlurmJob(job).message(), "absolute"));
        job = sampleJob();
        job.nodelist = {"n1", "n2"};
        QVERIFY(contains(validateSlurmJob(job).message(), "2 node(s) for 4 task(s)"));
        job = sampleJob();
        job.targets = "sim:";
        QVERIFY(contains(validateSlurmJob(job).message(), "targets of task 0"));
        job = sampleJob();
        job.gpusPerNode = 0;
        QVERIFY(contains(validateSlurmJob(job).message(), "no targets"));
        job = sampleJob();
        QVERIFY(contains(validateKubernetesJob(job).message(), "--image"));
        job.image = "img";
        job.claim = "pvc";
        QVERIFY(contains(validateKubernetesJob(job).message(), "not on the volume mounted at /fleet"));
        job.trace = "/fleet/trace.h5";
        job.outDir = "/fleet/out";
        QVERIFY(validateKubernetesJob(job).ok());
    }

    void kubernetesJobIsIndexedWithOnePodPerNode()
    {
        FleetJob job = sampleJob();
        job.trace = "/fleet/trace.h5";
        job.outDir = "/fleet/out";
        job.image = "img:1";
        job.claim = "pvc";
        const nlohmann::json m = kubernetesJob(job);
        QCOMPARE(m["apiVersion"].get<std::string>(), std::string("batch/v1"));
        QCOMPARE(m["kind"].get<std::string>(), std::string("Job"));
        QCOMPARE(m["spec"]["completionMode"].get<std::string>(), std::string("Indexed"));
        QCOMPARE(m["spec"]["completions"].get<int>(), 4);
        QCOMPARE(m["spec"]["parallelism"].get<int>(), 4);
        const nlohmann::json& c = m["spec"]["template"]["spec"]["containers"][0];
        QCOMPARE(c["resources"]["limits"]["nvidia.com/gpu"].get<int>(), 2);
        QVERIFY(contains(c["command"][2].get<std::string>(), "JOB_COMPLETION_INDEX"));
    }

    void nodeIdentityFromTheScheduler()
    {
        std::map<std::string, std::string> vars = {
            {"SLURMD_NODENAME", "gpu017"}, {"SLURM_ARRAY_TASK_ID", "3"}, {"SLURM_ARRAY_JOB_ID", "4711"}};
        auto lookup = [&vars](const std::string& k) -> std::optional<std::string> {
            auto it = vars.find(k);
            return it == vars.end() ? std::nullopt : std::optional<std::string>(it->second);
        };
        nlohmann::json n = nodeIdentity(lookup);
        QCOMPARE(n["host"].get<std::string>(), std::string("gpu017"));
        QCOMPARE(n["task"].get<std::string>(), std::string("3"));
        QCOMPARE(n["job_id"].get<std::string>(), std::string("4711"));
        QCOMPARE(n["scheduler"].get<std::string>(), std::string("slurm"));
        vars = {{"FAULTLINE_HOST", "node-b"}, {"JOB_COMPLETION_INDEX", "7"}, {"HOSTNAME", "fleet-7-abc"}};
        n = nodeIdentity(lookup);
        QCOMPARE(n["host"].get<std::string>(), std::string("node-b"));
        QCOMPARE(n["task"].get<std::string>(), std::string("7"));
        QCOMPARE(n["scheduler"].get<std::string>(), std::string("kubernetes"));
        QCOMPARE(n["pod"].get<std::string>(), std::string("fleet-7-abc"));
        vars.clear();
        n = nodeIdentity(lookup);
        QCOMPARE(n["scheduler"].get<std::string>(), std::string("none"));
        QVERIFY(!n["host"].get<std::string>().empty());
    }
};

QTEST_GUILESS_MAIN(TestFleetJob)
#include "test_fleet_job.moc"
