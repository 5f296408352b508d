// Fleet jobs as text (core/fleet/FleetJob.h): the Slurm batch script's array and directives, the
// per-task targets, shell quoting, the Kubernetes Indexed Job, and the checks that refuse a job
// that would go wrong on the cluster.
#include <QDir>
#include <QFile>
#include <QProcess>
#include <QTemporaryDir>
#include <QtTest>
#include <cmath>

#include "core/Text.h"
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

// A stand-in faultline in `dir` that writes its arguments, one per line, to DIR/args.
QString writeStubFaultline(const QString& dir, const QString& name = "fake-faultline")
{
    const QString fake = dir + "/" + name;
    QFile f(fake);
    if (!f.open(QIODevice::WriteOnly)) return {};
    f.write(
        "#!/bin/sh\nif [ \"$1\" = devices ]; then echo '{}'; exit 0; fi\n"
        "printf '%s\\n' \"$@\" > \"$(dirname \"$0\")/args\"\nexit 1\n");
    f.close();
    f.setPermissions(QFile::ReadOwner | QFile::WriteOwner | QFile::ExeOwner);
    return fake;
}

// Runs `script` with /bin/sh (`-n`: only parses it); the exit code.
int runShell(const std::string& script, const QStringList& shArgs, const QProcessEnvironment& env)
{
    QProcess sh;
    sh.setProcessEnvironment(env);
    sh.start("/bin/sh", shArgs + QStringList{"-c", QString::fromStdString(script)});
    if (!sh.waitForFinished(10000)) return -1;
    return sh.exitStatus() == QProcess::NormalExit ? sh.exitCode() : -1;
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
        // In sbatch's double quotes: the space would otherwise end the option.
        QVERIFY(contains(s, "#SBATCH --output=\"/shared/fleet/run 1/logs/%a.out\"\n"));
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

    // What reaches the job's text is checked first: a newline would add a shell line run on
    // every node, a space in an `#SBATCH` value another sbatch option (--uid=0 --wrap=id).
    void hostileValuesAreRefusedNamingTheOption_data()
    {
        QTest::addColumn<QString>("field");
        QTest::addColumn<QByteArray>("value");
        QTest::addColumn<QString>("option");
        QTest::newRow("partition with options")
            << "partition" << QByteArray("gpu --uid=0 --wrap=id") << "--partition";
        QTest::newRow("partition with a newline") << "partition" << QByteArray("gpu\nid") << "--partition";
        QTest::newRow("partition empty in a list") << "partition" << QByteArray("gpu,,cpu") << "--partition";
        QTest::newRow("name with a newline") << "name" << QByteArray("fleet\ntouch /tmp/pwned") << "--name";
        QTest::newRow("name with a space") << "name" << QByteArray("fleet --uid=0") << "--name";
        QTest::newRow("name with a quote") << "name" << QByteArray("fleet\"x") << "--name";
        QTest::newRow("out with a newline") << "out" << QByteArray("/shared/run\nid") << "--out";
        QTest::newRow("out with a backslash") << "out" << QByteArray("/shared/run\\1") << "--out";
        QTest::newRow("trace with a newline")
            << "trace" << QByteArray("/shared/t\nid.h5") << "the trace path";
        QTest::newRow("trace with an escape")
            << "trace" << QByteArray("/shared/t\x1b[2J.h5") << "the trace path";
        QTest::newRow("trace not UTF-8") << "trace" << QByteArray("/shared/t\xff.h5") << "the trace path";
        QTest::newRow("faultline with a newline") << "faultline" << QByteArray("/opt/f\nid") << "--faultline";
        QTest::newRow("ops with a newline") << "ops" << QByteArray("gemm\nid") << "--ops";
        QTest::newRow("targets with a newline") << "targets" << QByteArray("cpu\nid") << "--targets";
        QTest::newRow("task targets with a newline")
            << "taskTargets" << QByteArray("cpu\nid") << "--task-targets 1=";
        QTest::newRow("nodelist entry with options")
            << "nodelist" << QByteArray("n2 --uid=0") << "--nodelist";
        QTest::newRow("nodelist entry with a range")
            << "nodelist" << QByteArray("gpu[01-04]") << "--nodelist";
    }

    void hostileValuesAreRefusedNamingTheOption()
    {
        QFETCH(QString, field);
        QFETCH(QByteArray, value);
        QFETCH(QString, option);
        FleetJob job = sampleJob();
        const std::string v = value.toStdString();
        if (field == "partition") job.partition = v;
        if (field == "name") job.name = v;
        if (field == "out") job.outDir = v;
        if (field == "trace") job.trace = v;
        if (field == "faultline") job.faultline = v;
        if (field == "ops") job.ops = v;
        if (field == "targets") job.targets = v;
        if (field == "taskTargets") job.taskTargets[1] = v;
        if (field == "nodelist") job.nodelist = {"n1", v, "n3", "n4"};
        const Status s = validateSlurmJob(job);
        QVERIFY2(!s.ok(), qPrintable(field));
        QCOMPARE(s.error().code, ErrorCode::Usage);
        QVERIFY2(contains(s.message(), option.toStdString()), s.message().c_str());
        // The message itself is one printable line.
        QVERIFY2(isPrintableText(s.message()), s.message().c_str());
    }

    void kubernetesNamesFollowKubernetesRules()
    {
        FleetJob job = sampleJob();
        job.trace = "/fleet/trace.h5";
        job.outDir = "/fleet/out";
        job.image = "registry.example/faultline:1";
        job.claim = "fleet-data";
        QVERIFY(validateKubernetesJob(job).ok());
        const auto refused = [](FleetJob j, const std::string& option) {
            const Status s = validateKubernetesJob(j);
            return !s.ok() && s.error().code == ErrorCode::Usage && contains(s.message(), option);
        };
        FleetJob bad = job;
        bad.name = "Fleet_1";  // not a DNS label (upper case, '_')
        QVERIFY(refused(bad, "--name"));
        bad.name = std::string(64, 'a');  // longer than a label value may be
        QVERIFY(refused(bad, "--name"));
        bad.name = "fleet-";
        QVERIFY(refused(bad, "--name"));
        bad = job;
        bad.claim = "data claim";
        QVERIFY(refused(bad, "--claim"));
        bad.claim = "Data";
        QVERIFY(refused(bad, "--claim"));
        bad = job;
        bad.image = "img\nx";
        QVERIFY(refused(bad, "--image"));
        bad.image = "img x";
        QVERIFY(refused(bad, "--image"));
        bad = job;
        bad.mount = "/fleet:rw";
        QVERIFY(refused(bad, "--mount"));
        bad = job;
        bad.trace = "/fleet/t\nx.h5";
        QVERIFY(refused(bad, "the trace path"));
        job.claim = "fleet.data-1";  // a DNS subdomain
        QVERIFY(validateKubernetesJob(job).ok());
    }

    void numbersOutOfRangeAreRefused_data()
    {
        QTest::addColumn<QString>("field");
        QTest::addColumn<double>("value");
        QTest::addColumn<QString>("expected");
        QTest::newRow("timeout nan") << "timeout" << std::nan("") << "0.001 to 604800";
        QTest::newRow("timeout inf") << "timeout" << HUGE_VAL << "0.001 to 604800";
        QTest::newRow("timeout -1") << "timeout" << -1.0 << "0.001 to 604800";
        QTest::newRow("timeout 0") << "timeout" << 0.0 << "0.001 to 604800";
        QTest::newRow("timeout 1e300") << "timeout" << 1e300 << "0.001 to 604800";
        QTest::newRow("nodes 100001") << "tasks" << 100001.0 << "--nodes";
        QTest::newRow("reps 0") << "reps" << 0.0 << "--reps";
        QTest::newRow("gpus 1025") << "gpus" << 1025.0 << "--gpus-per-node";
        QTest::newRow("time 0") << "time" << 0.0 << "--time";
        QTest::newRow("time 100001") << "time" << 100001.0 << "--time";
    }

    void numbersOutOfRangeAreRefused()
    {
        QFETCH(QString, field);
        QFETCH(double, value);
        QFETCH(QString, expected);
        FleetJob job = sampleJob();
        if (field == "timeout") job.timeoutSeconds = value;
        if (field == "tasks") job.tasks = uint32_t(value);
        if (field == "reps") job.reps = uint32_t(value);
        if (field == "gpus") job.gpusPerNode = uint32_t(value);
        if (field == "time") job.timeLimitMinutes = uint32_t(value);
        const Status s = validateSlurmJob(job);
        QVERIFY(!s.ok());
        QCOMPARE(s.error().code, ErrorCode::Usage);
        QVERIFY2(contains(s.message(), expected.toStdString()), s.message().c_str());
        job = sampleJob();
        job.timeoutSeconds = 604800;
        QVERIFY(validateSlurmJob(job).ok());
    }

    // Paths with spaces, quotes, '$', '`', '#' and '%' reach the nodes as they are: the batch
    // script parses (`sh -n`), its #SBATCH --output is in sbatch's quotes, and the task script,
    // executed with a stand-in faultline, passes the exact paths and runs nothing of them.
    void pathsWithSpacesAndQuotesAreQuoted()
    {
        QTemporaryDir dir;
        QVERIFY(dir.isValid());
        const QString odd = dir.filePath("run 1 \"it's\" $(touch pwned) `touch pwned2` #5 %a");
        QVERIFY(QDir().mkpath(odd));
        const QString fake = writeStubFaultline(odd, "fault line's");
        QVERIFY(!fake.isEmpty());
        FleetJob job = sampleJob();
        job.trace = (odd + "/trace $(id).h5").toStdString();
        job.outDir = (odd + "/fleet 'x'").toStdString();
        job.faultline = fake.toStdString();
        job.ops = "gemm;touch pwned3";
        QVERIFY2(validateSlurmJob(job).ok(), validateSlurmJob(job).message().c_str());
        const std::string script = slurmBatchScript(job);
        QCOMPARE(runShell(script, {"-n"}, QProcessEnvironment::systemEnvironment()), 0);
        std::string expectedOutput = job.outDir;
        for (size_t at = 0; (at = expectedOutput.find_first_of("\"%", at)) != std::string::npos; at += 2)
            expectedOutput.insert(at, expectedOutput[at] == '"' ? "\\" : "%");
        QVERIFY2(contains(script, "#SBATCH --output=\"" + expectedOutput + "/logs/%a.out\"\n"),
                 script.c_str());
        QProcessEnvironment env = QProcessEnvironment::systemEnvironment();
        env.insert("TASK_INDEX", "2");
        QCOMPARE(runShell(taskShellScript(job, "TASK_INDEX"), {}, env), 0);
        QFile args(odd + "/args");
        QVERIFY(args.open(QIODevice::ReadOnly));
        const QStringList a = QString::fromUtf8(args.readAll()).split('\n', Qt::SkipEmptyParts);
        QCOMPARE(a.value(0), QString("replay"));
        QCOMPARE(a.value(1), QString::fromStdString(job.trace));
        QVERIFY(a.contains("gemm;touch pwned3"));
        QVERIFY(a.contains(QString::fromStdString(job.outDir) + "/results/2.h5"));
        QVERIFY(QFile::exists(QString::fromStdString(job.outDir) + "/results/2.exit"));
        for (const char* f : {"pwned", "pwned2", "pwned3"}) {
            QVERIFY2(!QFile::exists(dir.filePath(f)), f);
            QVERIFY2(!QFile::exists(odd + "/" + f), f);
            QVERIFY2(!QFile::exists(QDir::current().filePath(f)), f);
        }
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
