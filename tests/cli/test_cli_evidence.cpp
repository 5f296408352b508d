// `faultline evidence`, `keygen` and `verify` through the real executable, end to end on the demo
// incident: the bundle is accepted by sha256sum -c, minisign -V and faultline verify, its
// reproducer reproduces the campaign's verdicts, every change is found and named, and bad input
// is an error naming the file (exit 2) that leaves nothing behind.
#include <sys/stat.h>
#include <QDir>
#include <QFile>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QProcess>
#include <QStandardPaths>
#include <QTemporaryDir>
#include <QtTest>

#include <filesystem>

#include "ReplayTrace.h"
#include "core/replay/CampaignResultsFile.h"
#include "support/TestSupport.h"

using faultline::test::ProcessResult;
using faultline::test::runProcess;
using faultline::test::sourcePath;

namespace {

QByteArray readFile(const QString& path)
{
    QFile f(path);
    return f.open(QIODevice::ReadOnly) ? f.readAll() : QByteArray();
}

void writeFile(const QString& path, const QByteArray& bytes)
{
    QFile f(path);
    QVERIFY(f.open(QIODevice::WriteOnly | QIODevice::Truncate));
    QCOMPARE(f.write(bytes), bytes.size());
}

QString fixture(const QString& name)
{
    return sourcePath("tests/fixtures/evidence/" + name);
}

}  // namespace

class TestCliEvidence : public QObject {
    Q_OBJECT

    QTemporaryDir m_dir;
    QString m_campaign, m_key, m_bundle;

    static ProcessResult faultline(const QStringList& args, int timeoutMs = 300000)
    {
        return runProcess(QStringLiteral(FAULTLINE_EXE), args, timeoutMs);
    }
    QString path(const QString& name) const { return m_dir.filePath(name); }
    static QString minisign() { return QStandardPaths::findExecutable("minisign"); }
    // The demo campaign with `edit` applied, as the results file `name`.
    template <class Edit>
    QString editedCampaign(const QString& name, Edit edit) const
    {
        auto doc = faultline::readCampaignResults(m_campaign.toStdString());
        if (!doc) return {};
        edit(*doc);
        if (!faultline::writeCampaignResultsJson(path(name).toStdString(), *doc)) return {};
        return path(name);
    }
    // A copy of the demo bundle's folder, to tamper with.
    QString copyOfBundle(const QString& name) const
    {
        std::error_code ec;
        std::filesystem::copy(m_bundle.toStdString(), path(name).toStdString(),
                              std::filesystem::copy_options::recursive, ec);
        return ec ? QString() : path(name);
    }
    QStringList fullInputs() const
    {
        return {"--campaign",
                m_campaign,
                "--logs",
                fixture("dmesg-incident.log"),
                fixture("nvidia-bug-report.log.gz"),
                "--nvidia-smi",
                fixture("nvidia-smi-before-reset.xml"),
                fixture("nvidia-smi-after-reset.xml"),
                "--attach",
                fixture("fieldiag-result.txt")};
    }

private slots:
    void initTestCase()
    {
        QVERIFY(m_dir.isValid());
        auto demo = faultline({"demo", "--headless", "--out", path("incident")});
        QVERIFY2(demo.exitCode == 0, demo.err.constData());
        m_campaign = path("incident/replay-results.h5");
        QVERIFY(QFile::exists(m_campaign));
        m_key = path("evidence.key");
        auto keygen = faultline({"keygen", m_key});
        QVERIFY2(keygen.exitCode == 0, keygen.err.constData());
        QVERIFY(QFile::exists(m_key + ".pub"));
        m_bundle = path("case-1");
        auto r =
            faultline(QStringList{"evidence", "--out", m_bundle, "--case-id", "CASE-1", "--sign", m_key} +
                      fullInputs());
        QVERIFY2(r.exitCode == 0, r.err.constData());
    }

    void keygenRefusesExistingKeys()
    {
        const QByteArray before = readFile(m_key);
        auto again = faultline({"keygen", m_key});
        QCOMPARE(again.exitCode, 2);
        QVERIFY2(again.err.contains(m_key.toUtf8()) && again.err.contains("already exists"),
                 again.err.constData());
        QCOMPARE(readFile(m_key), before);
    }

    void bundleHoldsWhatTheVendorNeeds()
    {
        QVERIFY(QFile::exists(m_bundle + ".tar"));
        for (const QString& f : {QString("vendor/nvidia-bug-report.log.gz"),
                                 QString("vendor/fieldiag-result.txt"), QString("logs/dmesg-incident.log")})
            QVERIFY2(QFile::exists(m_bundle + "/" + f), qPrintable(f));
        QCOMPARE(readFile(m_bundle + "/vendor/nvidia-bug-report.log.gz"),
                 readFile(fixture("nvidia-bug-report.log.gz")));
        QCOMPARE(readFile(m_bundle + "/vendor/fieldiag-result.txt"),
                 readFile(fixture("fieldiag-result.txt")));
        QCOMPARE(readFile(m_bundle + "/health/nvidia-smi/nvidia-smi-before-reset.xml"),
                 readFile(fixture("nvidia-smi-before-reset.xml")));
        QCOMPARE(readFile(m_bundle + "/replay/replay-results.h5"), readFile(m_campaign));
        const QList<QByteArray> events = readFile(m_bundle + "/health/events.jsonl").trimmed().split('\n');
        QCOMPARE(events.size(), 3);
        for (const QByteArray& line : events) QVERIFY(QJsonDocument::fromJson(line).isObject());

        const QJsonObject c = QJsonDocument::fromJson(readFile(m_bundle + "/case.json")).object();
        QCOMPARE(c.value("schema_version").toInt(), 1);
        QCOMPARE(c.value("case").toObject().value("id").toString(), QString("CASE-1"));
        const QJsonObject suspect = c.value("suspect").toObject();
        QCOMPARE(suspect.value("serial").toString(), QString("1652822001234"));
        QCOMPARE(suspect.value("uuid").toString(), QString("GPU-9c3b0f17-0000-4000-8000-000000000001"));
        QCOMPARE(suspect.value("bus_id").toString(), QString("0000:2a:00.0"));
        const QJsonArray gpus = c.value("gpus").toArray();
        QJsonObject s;
        for (const QJsonValue& g : gpus)
            if (g.toObject().value("role").toString() == "suspect") s = g.toObject();
        QVERIFY(!s.isEmpty());
        QVERIFY(s.value("counters_before").isObject());
        QVERIFY(s.value("counters_after").isObject());
        QCOMPARE(s.value("snapshots").toArray().size(), 2);
        QVERIFY(!s.value("xid_summary").toArray().isEmpty());
        // Rates with Wilson intervals: a failing target's interval holds its rate and excludes 0.
        const QJsonObject replay = c.value("replay").toObject();
        QVERIFY(replay.value("reproduced").toBool());
        bool failing = false;
        for (const QJsonValue& v : replay.value("targets").toArray()) {
            const QJsonObject t = v.toObject();
            const QJsonArray ci = t.value("ci95").toArray();
            QCOMPARE(ci.size(), 2);
            const double rate = t.value("rate").toDouble();
            QVERIFY(ci[0].toDouble() <= rate + 1e-12 && rate <= ci[1].toDouble() + 1e-12);
            QCOMPARE(rate, t.value("failures").toDouble() / t.value("runs").toDouble());
            if (t.value("verdict").toString() != "healthy") {
                failing = true;
                QVERIFY(ci[0].toDouble() > 0);
            }
        }
        QVERIFY(failing);
        QVERIFY(!c.value("rma_reasons").toArray().isEmpty());
        QVERIFY(!c.value("ruled_out").toArray().isEmpty());
        QVERIFY(c.value("symptom").isObject());
        const QByteArray report = readFile(m_bundle + "/report.md");
        QVERIFY(report.contains("1652822001234"));
        // Builds with the GUI add report.pdf and the figures; the others say they do not.
        const QByteArray manifest = readFile(m_bundle + "/MANIFEST.sha256");
        if (QFile::exists(m_bundle + "/report.pdf")) {
            QVERIFY(readFile(m_bundle + "/report.pdf").startsWith("%PDF-"));
            for (const char* f : {"figures/heatmap.png", "figures/bit-histogram.png"}) {
                QVERIFY2(readFile(m_bundle + "/" + f).startsWith("\x89PNG"), f);
                QVERIFY(manifest.contains(QByteArray("SHA256 (") + f + ")"));
                QVERIFY(report.contains(f));
            }
            QVERIFY(manifest.contains("SHA256 (report.pdf)"));
        } else {
            QVERIFY(QJsonDocument(c.value("warnings").toArray()).toJson().contains("no report.pdf"));
        }
        QVERIFY(report.contains("## Reproduction"));
        QVERIFY(report.contains("reproduce.sh"));
    }

    void checkersAcceptTheBundle()
    {
        auto dir = faultline({"verify", m_bundle, "--pubkey", m_key + ".pub"});
        QVERIFY2(dir.exitCode == 0, dir.out.constData());
        QVERIFY(dir.out.contains("intact"));
        auto tar = faultline({"verify", m_bundle + ".tar", "--pubkey", m_key + ".pub"});
        QVERIFY2(tar.exitCode == 0, tar.out.constData());
        QProcess sum;
        sum.setWorkingDirectory(m_bundle);
        sum.start("sha256sum", {"-c", "--strict", "MANIFEST.sha256"});
        QVERIFY(sum.waitForFinished(60000));
        QVERIFY2(sum.exitCode() == 0, sum.readAllStandardOutput().constData());
        if (minisign().isEmpty()) QSKIP("minisign is not installed (scripts/setup-deps installs it)");
        auto v = runProcess(minisign(), {"-V", "-p", m_key + ".pub", "-m", m_bundle + "/MANIFEST.sha256"});
        QVERIFY2(v.exitCode == 0, v.err.constData());
        QVERIFY(v.out.contains("CASE-1"));
    }

    void extractedArchiveIsTheBundle()
    {
        const QString where = path("extracted");
        QVERIFY(QDir().mkpath(where));
        QProcess tar;
        tar.setWorkingDirectory(where);
        tar.start("tar", {"-xf", m_bundle + ".tar"});
        QVERIFY(tar.waitForFinished(60000));
        QCOMPARE(tar.exitCode(), 0);
        auto v = faultline({"verify", where + "/case-1", "--pubkey", m_key + ".pub"});
        QVERIFY2(v.exitCode == 0, v.out.constData());
    }

    void reproducerReproducesTheVerdict()
    {
        QProcess sh;
        QProcessEnvironment env = QProcessEnvironment::systemEnvironment();
        env.insert("FAULTLINE", QStringLiteral(FAULTLINE_EXE));
        sh.setProcessEnvironment(env);
        sh.start("sh", {m_bundle + "/reproducer/reproduce.sh"});
        QVERIFY(sh.waitForFinished(300000));
        const QByteArray out = sh.readAllStandardOutput();
        QVERIFY2(sh.exitCode() == 0, out.constData());
        QVERIFY(out.contains("reproduced: cpu is healthy"));
        QVERIFY(!out.contains("NOT reproduced"));
    }

    void changesAreFoundAndNamed()
    {
        const QString copy = path("tampered");
        QVERIFY(QProcess::execute("cp", {"-r", m_bundle, copy}) == 0);
        const QString file = copy + "/vendor/fieldiag-result.txt";
        const QByteArray original = readFile(file);
        QByteArray changed = original;
        changed[10] = char(changed[10] ^ 1);
        writeFile(file, changed);
        auto c = faultline({"verify", copy, "--pubkey", m_key + ".pub"});
        QCOMPARE(c.exitCode, 1);
        QVERIFY2(c.out.contains("vendor/fieldiag-result.txt: changed"), c.out.constData());
        writeFile(file, original);
        QVERIFY(QFile::remove(copy + "/report.md"));
        auto removed = faultline({"verify", copy, "--pubkey", m_key + ".pub"});
        QCOMPARE(removed.exitCode, 1);
        QVERIFY2(removed.out.contains("report.md: removed"), removed.out.constData());
        QVERIFY(QFile::copy(m_bundle + "/report.md", copy + "/report.md"));
        writeFile(copy + "/vendor/extra.log", "x");
        auto added = faultline({"verify", copy, "--pubkey", m_key + ".pub"});
        QCOMPARE(added.exitCode, 1);
        QVERIFY2(added.out.contains("vendor/extra.log: added"), added.out.constData());
        QVERIFY(QFile::remove(copy + "/vendor/extra.log"));
        // A tampered signature: one character of the global signature line.
        const QString sigPath = copy + "/MANIFEST.sha256.minisig";
        const QByteArray sig = readFile(sigPath);
        QByteArray bad = sig;
        const qsizetype at = bad.lastIndexOf('\n', bad.size() - 2) + 5;
        bad[at] = bad[at] == 'A' ? 'B' : 'A';
        writeFile(sigPath, bad);
        auto s = faultline({"verify", copy, "--pubkey", m_key + ".pub"});
        QCOMPARE(s.exitCode, 1);
        QVERIFY2(s.out.contains("MANIFEST.sha256.minisig"), s.out.constData());
        writeFile(sigPath, sig);
        QCOMPARE(faultline({"verify", copy, "--pubkey", m_key + ".pub"}).exitCode, 0);
    }

    void badInputIsANamedError()
    {
        writeFile(path("bad.key"), "untrusted comment: nothing\nAAAA\n");
        auto badKey = faultline(QStringList{"evidence", "--out", path("never"), "--sign", path("bad.key")} +
                                fullInputs());
        QCOMPARE(badKey.exitCode, 2);
        QVERIFY2(badKey.err.contains(path("bad.key").toUtf8()), badKey.err.constData());
        QVERIFY(!QFile::exists(path("never")));
        QVERIFY(!QFile::exists(path("never.tar")));
        auto badPub = faultline({"verify", m_bundle, "--pubkey", path("bad.key")});
        QCOMPARE(badPub.exitCode, 2);
        QVERIFY2(badPub.err.contains(path("bad.key").toUtf8()), badPub.err.constData());
        auto missing = faultline({"evidence", "--out", path("never"), "--logs", path("no-such.log")});
        QCOMPARE(missing.exitCode, 2);
        QVERIFY2(missing.err.contains("no-such.log"), missing.err.constData());
        QVERIFY(!QFile::exists(path("never")));
        auto notBundle = faultline({"verify", fixture("fieldiag-result.txt")});
        QCOMPARE(notBundle.exitCode, 2);
        auto noSuch = faultline({"verify", path("nowhere")});
        QCOMPARE(noSuch.exitCode, 2);
    }

    // Issue #28, finding 2: a campaign's text reaches reproduce.sh. A newline in a target label (a
    // fleet node's host name is part of it) would end a comment line and run the rest.
    void campaignTextThatIsNotPrintableIsRefused()
    {
        const QString marker = path("pwned");
        const QString hostile = editedCampaign("hostile.h5", [&](nlohmann::json& doc) {
            doc["targets"][0]["target"] = "cpu\nid > " + marker.toStdString();
        });
        QVERIFY(!hostile.isEmpty());
        auto r = faultline({"evidence", "--out", path("hostile-case"), "--campaign", hostile, "--nvidia-smi",
                            fixture("nvidia-smi-before-reset.xml")});
        QCOMPARE(r.exitCode, 2);
        QVERIFY2(r.err.contains("hostile.h5") && r.err.contains("targets[0].target") &&
                     r.err.contains("not printable"),
                 r.err.constData());
        QVERIFY(!QFile::exists(path("hostile-case")));
        QVERIFY(!QFile::exists(path("hostile-case.tar")));
        // Had a bundle been made, running its reproducer must not have run the label.
        if (QFile::exists(path("hostile-case/reproducer/reproduce.sh"))) {
            QProcess sh;
            QProcessEnvironment env = QProcessEnvironment::systemEnvironment();
            env.insert("FAULTLINE", "/bin/true");
            sh.setProcessEnvironment(env);
            sh.start("sh", {path("hostile-case/reproducer/reproduce.sh")});
            QVERIFY(sh.waitForFinished(60000));
        }
        QVERIFY(!QFile::exists(marker));
        // A verdict and a reference likewise.
        const QString verdict = editedCampaign("hostile-verdict.h5", [](nlohmann::json& doc) {
            doc["targets"][1]["verdict"] = "persistent\rid";
        });
        auto v = faultline({"evidence", "--out", path("hostile-verdict"), "--campaign", verdict,
                            "--nvidia-smi", fixture("nvidia-smi-before-reset.xml")});
        QCOMPARE(v.exitCode, 2);
        QVERIFY2(v.err.contains("targets[1].verdict"), v.err.constData());
    }

    // Issue #28, finding 6: a link planted at the archive's old temporary name (DIR.tar.tmp)
    // pointing at an input made `evidence` write the archive over that input.
    void plantedLinksNeverRedirectTheArchive()
    {
        QVERIFY(QDir().mkpath(path("planted-in")));
        const QString input = path("planted-in/replay-results.h5");
        QVERIFY(QFile::copy(m_campaign, input));
        const QByteArray before = readFile(input);
        const QString out = path("planted");
        QVERIFY(QFile::link(input, out + ".tar.tmp"));
        auto r = faultline({"evidence", "--out", out, "--campaign", input, "--nvidia-smi",
                            fixture("nvidia-smi-before-reset.xml")});
        QVERIFY2(r.exitCode == 0, r.err.constData());
        QVERIFY2(readFile(input) == before, "the campaign input was written over");
        QCOMPARE(QFileInfo(out + ".tar.tmp").symLinkTarget(), QFileInfo(input).absoluteFilePath());
        auto v = faultline({"verify", out + ".tar"});
        QVERIFY2(v.exitCode == 0, v.out.constData());
        // A link at DIR.tar itself, even a dangling one, is refused and left alone.
        QVERIFY(QFile::link(path("nowhere"), path("dangling.tar")));
        auto d = faultline({"evidence", "--out", path("dangling"), "--campaign", input, "--nvidia-smi",
                            fixture("nvidia-smi-before-reset.xml")});
        QCOMPARE(d.exitCode, 2);
        QVERIFY2(d.err.contains("dangling.tar"), d.err.constData());
        QVERIFY(QFileInfo(path("dangling.tar")).isSymLink());
        QVERIFY(!QFile::exists(path("dangling")));
    }

    void outputThatIsAnInputIsRefused()
    {
        const QString input = path("as-output.tar");
        QVERIFY(QFile::copy(m_campaign, input));
        const QByteArray before = readFile(input);
        // DIR.tar is the campaign; then DIR is.
        auto r = faultline({"evidence", "--out", path("as-output"), "--campaign", input, "--nvidia-smi",
                            fixture("nvidia-smi-before-reset.xml")});
        QCOMPARE(r.exitCode, 2);
        QVERIFY2(r.err.contains("as-output.tar") && r.err.contains("input given as --campaign"),
                 r.err.constData());
        auto same = faultline({"evidence", "--out", input, "--campaign", input, "--nvidia-smi",
                               fixture("nvidia-smi-before-reset.xml")});
        QCOMPARE(same.exitCode, 2);
        QVERIFY2(same.err.contains("input given as --campaign"), same.err.constData());
        QCOMPARE(readFile(input), before);
        QVERIFY(!QFile::exists(path("as-output")));
    }

    // A FIFO where a file is read would block for ever: refused at once, exit 2.
    void fifosAreRefusedWithoutBlocking()
    {
        const QString fifo = path("pipe");
        QCOMPARE(::mkfifo(fifo.toLocal8Bit().constData(), 0644), 0);
        const QList<QStringList> commands{
            {"verify", fifo},
            {"verify", m_bundle, "--pubkey", fifo},
            {"evidence", "--out", path("fifo-1"), "--logs", fifo},
            {"evidence", "--out", path("fifo-2"), "--campaign", m_campaign, "--trace", fifo},
            {"evidence", "--out", path("fifo-3"), "--sign", fifo, "--nvidia-smi",
             fixture("nvidia-smi-before-reset.xml")},
        };
        for (const QStringList& args : commands) {
            auto r = faultline(args, 20000);
            QVERIFY2(!r.timedOut, qPrintable("blocked: faultline " + args.join(' ')));
            QCOMPARE(r.exitCode, 2);
            QVERIFY2(r.err.contains("pipe") && r.err.contains("not a regular file"), r.err.constData());
        }
        // In a bundle: named, never opened.
        const QString copy = copyOfBundle("with-fifo");
        QVERIFY(!copy.isEmpty());
        QCOMPARE(::mkfifo((copy + "/vendor/pipe").toLocal8Bit().constData(), 0644), 0);
        auto v = faultline({"verify", copy}, 20000);
        QVERIFY(!v.timedOut);
        QCOMPARE(v.exitCode, 1);
        QVERIFY2(v.out.contains("vendor/pipe: added"), v.out.constData());
    }

    // Issue #28, finding 8: a signed bundle whose signature was stripped verified without
    // --pubkey as merely "unsigned".
    void strippedSignatureIsRefused()
    {
        const QString copy = copyOfBundle("stripped");
        QVERIFY(!copy.isEmpty());
        QVERIFY(QFile::remove(copy + "/MANIFEST.sha256.minisig"));
        auto r = faultline({"verify", copy});
        QCOMPARE(r.exitCode, 1);
        QVERIFY2(r.out.contains("MANIFEST.sha256.minisig: missing"), r.out.constData());
    }

    // Issue #28, finding 8: bytes of a header's checksum field could change unnoticed (leading
    // zeros for spaces, the NUL and the space swapped).
    void checksumFieldChangesAreFound()
    {
        const QByteArray tar = readFile(m_bundle + ".tar");
        QVERIFY(tar.size() > 1024);
        QCOMPARE(tar.mid(148, 1), QByteArray("0"));  // six digits, the first a zero
        const QList<QPair<int, char>> changes{{148, ' '}, {154, ' '}, {155, '\0'}};
        for (const auto& [at, value] : changes) {
            QByteArray changed = tar;
            changed[at] = value;
            const QString copy = path(QString("checksum-%1.tar").arg(at));
            writeFile(copy, changed);
            auto r = faultline({"verify", copy, "--pubkey", m_key + ".pub"});
            QVERIFY2(r.exitCode == 1, qPrintable(QString("byte %1: %2").arg(at).arg(r.out.constData())));
            QVERIFY2(r.out.contains("checksum"), r.out.constData());
        }
    }

    // Issue #28, finding 2: a merged fleet campaign's labels (host/target) are no replay targets.
    // Its reproducer replays the suspect on its own node's target, or (here: simulated GPUs have
    // no identity to find the suspect by) says why it cannot, exit 2, never a command that fails.
    void fleetCampaignReproducerNeverWritesACommandThatCannotWork()
    {
        const QString trace = path("fleet-trace.h5");
        const QString made = faultline::test::makeReplayTrace(trace);
        QVERIFY2(made.isEmpty(), qPrintable(made));
        qputenv("FAULTLINE_WORKER", FAULTLINE_WORKER_EXE);
        for (const char* host : {"node-a", "node-b"}) {
            qputenv("FAULTLINE_HOST", host);
            const QString targets =
                QByteArray(host) == "node-b" ? "cpu,sim:flip:op=gemm,rate=1" : "cpu,sim:healthy";
            auto r = faultline({"replay", trace, "--targets", targets, "--ops", "gemm", "--reps", "2",
                                "--quiet", "--out", path(QString("fleet-%1.h5").arg(host))});
            QVERIFY2(r.exitCode == 0 || r.exitCode == 1, r.err.constData());
        }
        qunsetenv("FAULTLINE_HOST");
        auto merge =
            faultline({"merge", path("fleet-node-a.h5"), path("fleet-node-b.h5"), "--out", path("fleet.h5")});
        QVERIFY2(merge.exitCode == 0 || merge.exitCode == 1, merge.err.constData());
        auto r = faultline({"evidence", "--out", path("fleet-case"), "--campaign", path("fleet.h5"),
                            "--trace", trace, "--suspect", "0000:2a:00.0"});
        QVERIFY2(r.exitCode == 0, r.err.constData());
        // The suspect is none of the fleet's GPUs: it failed nothing, so it has no reproducer, and
        // node-b's failures are never made its evidence.
        QVERIFY2(r.err.contains("no target of the campaign ran on the suspect GPU"), r.err.constData());
        const QJsonObject c = QJsonDocument::fromJson(readFile(path("fleet-case/case.json"))).object();
        QVERIFY(c.value("reproducer").isNull());
        QVERIFY(!QFile::exists(path("fleet-case/reproducer/reproduce.sh")));
        QVERIFY2(!QJsonDocument(c.value("rma_reasons").toArray()).toJson().contains("node-b"),
                 QJsonDocument(c.value("rma_reasons").toArray()).toJson().constData());
        QVERIFY(QJsonDocument(c.value("other_targets").toArray()).toJson().contains("node-b/"));
    }

    // Issue 23: with --suspect naming a GPU by UUID and a campaign in which only a simulated target
    // failed, the report never names the simulation's failures as the suspect's, there is no
    // reproducer of them, and a log whose Xids are another GPU's is context with a warning.
    void simulatedFailuresAreNeverTheSuspects()
    {
        const QString trace = path("incident/incident-trace.h5");
        qputenv("FAULTLINE_WORKER", FAULTLINE_WORKER_EXE);
        auto replay = faultline({"replay", trace, "--targets", "cpu,sim:flip:op=gemm,rate=1", "--ops", "gemm",
                                 "--reps", "2", "--quiet", "--out", path("flip.h5")});
        QCOMPARE(replay.exitCode, 1);
        const QString log = path("dmesg-gpu0.log");
        writeFile(log,
                  "[ 4102.118001] NVRM: GPU at PCI:0000:18:00: GPU-5d7e1a62-0000-4000-8000-000000000000\n"
                  "[ 4102.118003] NVRM: Xid (PCI:0000:18:00): 79, pid=1, name=python3, GPU has fallen off "
                  "the bus.\n");
        auto r = faultline({"evidence", "--out", path("flip-case"), "--campaign", path("flip.h5"), "--logs",
                            log, "--suspect", "GPU-9c3b0f17-0000-4000-8000-000000000001"});
        QVERIFY2(r.exitCode == 0, r.err.constData());
        QVERIFY2(r.err.contains("warning: campaign: no target of the campaign ran on the suspect GPU"),
                 r.err.constData());
        QVERIFY2(r.err.contains("none of the 1 Xid/SXid event(s) is the suspect GPU's (bus 0000:18:00.0"),
                 r.err.constData());
        const QJsonObject c = QJsonDocument::fromJson(readFile(path("flip-case/case.json"))).object();
        // The suspect's bus id and serial come from the trace's record of the same UUID.
        QCOMPARE(c.value("suspect").toObject().value("serial").toString(), QString("1652822001234"));
        QVERIFY2(!QJsonDocument(c.value("rma_reasons").toArray()).toJson().contains("sim:flip"),
                 QJsonDocument(c.value("rma_reasons").toArray()).toJson().constData());
        const QByteArray others = QJsonDocument(c.value("other_targets").toArray()).toJson();
        QVERIFY2(
            others.contains("(a simulated device, not the suspect GPU)") && others.contains("context only"),
            others.constData());
        QVERIFY(c.value("reproducer").isNull());
        QVERIFY(!QFile::exists(path("flip-case/reproducer")));
        const QByteArray report = readFile(path("flip-case/report.md"));
        QVERIFY(report.contains("No target of this campaign ran on the suspect GPU"));
        QVERIFY(report.contains("a simulated device, not the suspect"));
        const qsizetype checklist = report.indexOf("## Checklist");
        QVERIFY(checklist > 0);
        const QByteArray summary = report.left(checklist);
        QVERIFY2(!summary.left(summary.indexOf("context only")).contains("sim:flip"), summary.constData());
    }

    // The demo's suspect is simulated, as its trace declares (simulated_defect): beside a failing
    // sim:flip, only the stand-in's divergent ops are reproduced, at repetitions sized to its rate,
    // and its RMA reason says it is simulated.
    void reproducerReplaysOnlyTheSuspectsOps()
    {
        const QString trace = path("incident/incident-trace.h5");
        const QJsonObject demo = QJsonDocument::fromJson(readFile(m_bundle + "/case.json")).object();
        QString standIn;
        for (const QJsonValue& v : demo.value("replay").toObject().value("targets").toArray())
            if (v.toObject().value("target").toString().startsWith("sim:"))
                standIn = v.toObject().value("target").toString();
        QVERIFY(!standIn.isEmpty());
        qputenv("FAULTLINE_WORKER", FAULTLINE_WORKER_EXE);
        // sim:flip fails every add; the stand-in corrupts only GEMM tiles.
        auto replay = faultline({"replay", trace, "--targets", "cpu,sim:flip:op=add,rate=1," + standIn,
                                 "--reps", "3", "--quiet", "--out", path("both.h5")});
        QCOMPARE(replay.exitCode, 1);
        auto r = faultline({"evidence", "--out", path("both-case"), "--campaign", path("both.h5")});
        QVERIFY2(r.exitCode == 0, r.err.constData());
        const QJsonObject c = QJsonDocument::fromJson(readFile(path("both-case/case.json"))).object();
        const QJsonObject replayed = c.value("replay").toObject();
        QJsonArray flipOps, standInOps;
        for (const QJsonValue& v : replayed.value("targets").toArray()) {
            const QJsonObject t = v.toObject();
            if (t.value("target").toString().startsWith("sim:flip")) {
                flipOps = t.value("failing_ops").toArray();
                QCOMPARE(t.value("role").toString(), QString("simulated"));
            }
            if (t.value("target").toString() == standIn) {
                standInOps = t.value("failing_ops").toArray();
                QCOMPARE(t.value("role").toString(), QString("simulated_stand_in"));
            }
        }
        QVERIFY(!flipOps.isEmpty() && !standInOps.isEmpty());
        const QJsonObject repro = c.value("reproducer").toObject();
        QCOMPARE(repro.value("ops").toArray(), standInOps);  // not the add ops sim:flip failed
        for (const QJsonValue& op : flipOps) QVERIFY(!standInOps.contains(op));
        const QString command = repro.value("command").toString();
        QVERIFY2(command.contains("--targets 'cpu," + standIn + "'"), qPrintable(command));
        QVERIFY2(!command.contains("sim:flip"), qPrintable(command));
        const QJsonObject reps = repro.value("reps").toObject();
        QVERIFY2(command.contains("--reps " + QString::number(reps.value("reps").toInt()) + " "),
                 qPrintable(command));
        QVERIFY(reps.value("probability").toDouble() >= 0.99 || reps.value("capped").toBool());
        const QByteArray reasons = QJsonDocument(c.value("rma_reasons").toArray()).toJson();
        QVERIFY2(!reasons.contains("sim:flip"), reasons.constData());
        QVERIFY2(reasons.contains(
                     "simulated: silent data corruption reproduced on the suspect's simulated stand-in"),
                 reasons.constData());
    }

    void existingOutputsAreNeverOverwritten()
    {
        const QByteArray manifest = readFile(m_bundle + "/MANIFEST.sha256");
        auto again = faultline(QStringList{"evidence", "--out", m_bundle} + fullInputs());
        QCOMPARE(again.exitCode, 2);
        QVERIFY2(again.err.contains("already exists"), again.err.constData());
        QCOMPARE(readFile(m_bundle + "/MANIFEST.sha256"), manifest);
        writeFile(path("taken.tar"), "mine");
        auto tar = faultline(QStringList{"evidence", "--out", path("taken")} + fullInputs());
        QCOMPARE(tar.exitCode, 2);
        QVERIFY2(tar.err.contains("taken.tar"), tar.err.constData());
        QCOMPARE(readFile(path("taken.tar")), QByteArray("mine"));
        QVERIFY(!QFile::exists(path("taken")));
    }

    void suspectWithoutIdentityIsRefused()
    {
        writeFile(path("quiet.log"), "[    1.000000] Linux version 6.1.0\n");
        auto r = faultline({"evidence", "--out", path("no-identity"), "--logs", path("quiet.log")});
        QCOMPARE(r.exitCode, 2);
        QVERIFY2(r.err.contains("no serial, UUID or bus id"), r.err.constData());
        QVERIFY(!QFile::exists(path("no-identity")));
    }

    void missingVendorNeedsAreWarnings()
    {
        auto r = faultline({"evidence", "--out", path("thin"), "--nvidia-smi",
                            fixture("nvidia-smi-before-reset.xml"), "--suspect", "1652822001234"});
        QVERIFY2(r.exitCode == 0, r.err.constData());
        QVERIFY2(r.err.contains("no nvidia-bug-report"), r.err.constData());
        QVERIFY(r.err.contains("no reproduction"));
        QVERIFY(r.err.contains("unsigned"));
        const QByteArray report = readFile(path("thin/report.md"));
        QVERIFY(report.contains("no nvidia-bug-report"));
        QVERIFY(report.contains("**missing**"));
        auto v = faultline({"verify", path("thin")});
        QVERIFY2(v.exitCode == 0, v.out.constData());
        QVERIFY(v.out.contains("unsigned"));
    }

    void encryptedKeysSignWithTheirPassword()
    {
        if (minisign().isEmpty()) QSKIP("minisign is not installed (scripts/setup-deps installs it)");
        QProcess gen;
        gen.start(minisign(), {"-G", "-p", path("pw.pub"), "-s", path("pw.key")});
        QVERIFY(gen.waitForStarted());
        gen.write("open sesame\nopen sesame\n");
        gen.closeWriteChannel();
        QVERIFY(gen.waitForFinished(120000));
        QCOMPARE(gen.exitCode(), 0);
        const QStringList args{"evidence",     "--nvidia-smi",  fixture("nvidia-smi-before-reset.xml"),
                               "--suspect",    "1652822001234", "--sign",
                               path("pw.key"), "--out"};
        qputenv("FAULTLINE_KEY_PASSWORD", "wrong");
        auto wrong = faultline(args + QStringList{path("pw-wrong")});
        QCOMPARE(wrong.exitCode, 2);
        QVERIFY2(wrong.err.contains("wrong password") && wrong.err.contains("pw.key"), wrong.err.constData());
        QVERIFY(!QFile::exists(path("pw-wrong")));
        qputenv("FAULTLINE_KEY_PASSWORD", "open sesame");
        auto right = faultline(args + QStringList{path("pw-right")});
        qunsetenv("FAULTLINE_KEY_PASSWORD");
        QVERIFY2(right.exitCode == 0, right.err.constData());
        auto v = runProcess(minisign(), {"-V", "-p", path("pw.pub"), "-m", path("pw-right/MANIFEST.sha256")});
        QVERIFY2(v.exitCode == 0, v.err.constData());
    }

    void minisignSignaturesOfABundleVerify()
    {
        if (minisign().isEmpty()) QSKIP("minisign is not installed (scripts/setup-deps installs it)");
        auto gen = runProcess(minisign(), {"-G", "-W", "-p", path("m.pub"), "-s", path("m.key")});
        QVERIFY2(gen.exitCode == 0, gen.err.constData());
        auto r = faultline({"evidence", "--out", path("by-minisign"), "--nvidia-smi",
                            fixture("nvidia-smi-before-reset.xml"), "--suspect", "0000:2a:00.0"});
        QVERIFY2(r.exitCode == 0, r.err.constData());
        auto sign =
            runProcess(minisign(), {"-S", "-s", path("m.key"), "-m", path("by-minisign/MANIFEST.sha256")});
        QVERIFY2(sign.exitCode == 0, sign.err.constData());
        auto v = faultline({"verify", path("by-minisign"), "--pubkey", path("m.pub")});
        QVERIFY2(v.exitCode == 0, v.out.constData());
        QVERIFY(v.out.contains("signature valid"));
        // And a key minisign made signs bundles through faultline.
        auto ours =
            faultline(QStringList{"evidence", "--out", path("with-minisign-key"), "--sign", path("m.key")} +
                      fullInputs());
        QVERIFY2(ours.exitCode == 0, ours.err.constData());
        auto mv = runProcess(minisign(),
                             {"-V", "-p", path("m.pub"), "-m", path("with-minisign-key/MANIFEST.sha256")});
        QVERIFY2(mv.exitCode == 0, mv.err.constData());
    }
};

QTEST_GUILESS_MAIN(TestCliEvidence)
#include "test_cli_evidence.moc"
