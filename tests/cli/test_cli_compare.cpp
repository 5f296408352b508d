// `faultline compare` through the built executable: exit codes (0 the files agree, 1 they differ:
// beyond tolerance, a differing value of another dataset, a pair that is not comparable; 2 error),
// errors on stderr naming the files, nothing compared is an error, and an --out that is one of
// the inputs is refused before anything is written.
#include <sys/stat.h>

#include <QFile>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QProcess>
#include <QTemporaryDir>
#include <QtTest>
#include <cstring>

#include "core/io/SafetensorsWriter.h"
#include "support/TestSupport.h"

using namespace faultline;

namespace {

test::ProcessResult faultlineRun(const QStringList& args)
{
    return test::runProcess(QStringLiteral(FAULTLINE_EXE), args, 60000);
}

// A snapshot with tensor `name` of `shape`, values from `seed`, and element 3 given a flipped
// exponent bit when `corrupt`.
QString writeSnapshot(const QString& path, const std::string& name, std::vector<uint64_t> shape,
                      uint64_t seed, bool corrupt = false)
{
    HostTensor t = test::randomNormalTensor(shape, seed);
    if (corrupt) {
        uint32_t bits;
        std::memcpy(&bits, t.data.data() + 12, 4);
        bits ^= 1u << 28;
        std::memcpy(t.data.data() + 12, &bits, 4);
    }
    Status st = writeSafetensors(path.toStdString(), {{name, t.dtype, t.shape, t.data.data()}});
    return st ? QString() : QString::fromStdString(st.message());
}

}  // namespace

class TestCliCompare : public QObject {
    Q_OBJECT
    QTemporaryDir m_dir;

private slots:
    void exitCodesFollowTheEvidence()
    {
        const QString a = m_dir.filePath("a.safetensors"), b = m_dir.filePath("b.safetensors"),
                      c = m_dir.filePath("c.safetensors");
        QVERIFY(writeSnapshot(a, "w", {16, 16}, 1).isEmpty());
        QVERIFY(writeSnapshot(b, "w", {16, 16}, 1).isEmpty());
        QVERIFY(writeSnapshot(c, "w", {16, 16}, 1, true).isEmpty());
        auto same = faultlineRun({"compare", a, b, "--quiet"});
        QCOMPARE(same.exitCode, 0);
        auto diverged = faultlineRun({"compare", c, a, "--json", "--quiet"});
        QCOMPARE(diverged.exitCode, 1);
        const QJsonObject o = QJsonDocument::fromJson(diverged.out).object();
        QVERIFY2(!o.isEmpty(), diverged.out.constData());
    }

    void nanRowIsNamedAndCounted()
    {
        // A row of NaNs (issue #13): named nan_inf, not a stuck exponent bit, and the max error
        // line says NaN/Inf were introduced instead of reading "max |err| 0, max 0 ulp".
        const QString a = m_dir.filePath("nan-a.safetensors"), b = m_dir.filePath("nan-b.safetensors");
        QVERIFY(writeSnapshot(a, "w", {32, 64}, 4).isEmpty());
        HostTensor t = test::randomNormalTensor({32, 64}, 4);
        const uint32_t nan = 0x7fc00000u;
        for (uint64_t c = 0; c < 64; ++c) std::memcpy(t.data.data() + (5 * 64 + c) * 4, &nan, 4);
        QVERIFY(writeSafetensors(b.toStdString(), {{"w", t.dtype, t.shape, t.data.data()}}).ok());
        auto text = faultlineRun({"compare", b, a, "--tolerance", "ulp:2", "--quiet"});
        QCOMPARE(text.exitCode, 1);
        const QString out = QString::fromUtf8(text.out);
        QVERIFY2(out.contains("no finite element differs; 64 NaN/Inf introduced"), text.out.constData());
        QVERIFY2(!out.contains("max |err| 0, max 0 ulp"), text.out.constData());
        QVERIFY2(out.contains("signature: nan_inf"), text.out.constData());
        QVERIFY2(out.contains("what: nan_inf, where: row_stripe"), text.out.constData());
        auto json = faultlineRun({"compare", b, a, "--tolerance", "ulp:2", "--json", "--quiet"});
        const QJsonObject sig = QJsonDocument::fromJson(json.out)
                                    .object()["tensors"]
                                    .toArray()[0]
                                    .toObject()["signature"]
                                    .toObject();
        QCOMPARE(sig["kind"].toString(), QString("nan_inf"));
        QCOMPARE(sig["what"].toString(), QString("nan_inf"));
        QCOMPARE(sig["where"].toString(), QString("row_stripe"));
    }

    void nothingComparedIsAnError()
    {
        const QString a = m_dir.filePath("only-w.safetensors"), b = m_dir.filePath("only-v.safetensors");
        QVERIFY(writeSnapshot(a, "w", {4, 4}, 1).isEmpty());
        QVERIFY(writeSnapshot(b, "v", {4, 4}, 1).isEmpty());
        auto r = faultlineRun({"compare", a, b, "--quiet"});
        QCOMPARE(r.exitCode, 2);
        QVERIFY2(r.err.contains("nothing was compared"), r.err.constData());
        QVERIFY2(r.err.contains("only-w.safetensors"), r.err.constData());
    }

    // A pair whose shapes differ is a difference between the files (exit 1), named on stderr,
    // and the other pairs are still compared and reported.
    void shapeMismatchIsADifference()
    {
        const QString a = m_dir.filePath("shape-a.safetensors"), b = m_dir.filePath("shape-b.safetensors");
        HostTensor w = test::randomNormalTensor({4, 4}, 1), v = test::randomNormalTensor({4, 5}, 1);
        HostTensor x = test::randomNormalTensor({8}, 2);
        QVERIFY(writeSafetensors(a.toStdString(), {{"w", w.dtype, w.shape, w.data.data()},
                                                   {"x", x.dtype, x.shape, x.data.data()}})
                    .ok());
        QVERIFY(writeSafetensors(b.toStdString(), {{"w", v.dtype, v.shape, v.data.data()},
                                                   {"x", x.dtype, x.shape, x.data.data()}})
                    .ok());
        auto r = faultlineRun({"compare", a, b, "--quiet", "--json"});
        QCOMPARE(r.exitCode, 1);
        QVERIFY2(r.err.contains("not comparable: ") && r.err.contains("shape-a.safetensors") &&
                     r.err.contains("w: "),
                 r.err.constData());
        const QJsonObject o = QJsonDocument::fromJson(r.out).object();
        QCOMPARE(o["tensors"].toArray().size(), 1);  // x, still compared
        QCOMPARE(o["not_comparable"].toArray()[0].toObject()["name"].toString(), QString("w"));
        QVERIFY(o["errors"].toArray().isEmpty());
    }

    // The tensors agree but the loss table, the RNG state and the optimizer's name do not: the
    // files differ (exit 1), and the text says where. A dataset that cannot be read (a filter
    // this HDF5 lacks: h5py's lzf) is an error (exit 2), the other pairs still reported.
    void datasetsThatAreNotTensorsCount()
    {
        QTemporaryDir dir;
        FL_WRITE_FIXTURE("write_h5_records.py", QStringList{dir.path()});
        auto r =
            faultlineRun({"compare", dir.filePath("suspect.h5"), dir.filePath("reference.h5"), "--quiet"});
        QCOMPARE(r.exitCode, 1);
        for (const char* text : {"1 tensor(s) compared: 0 beyond tolerance, 1 bit-identical",
                                 "12 other dataset(s) compared for equality: 10 differ", "≠ loss_table",
                                 "≠ rng_state", "[0]: \"adamw\" vs \"adam\"",
                                 "not compared: vlen_tables: ", "unpaired (suspect only): only_in_suspect"})
            QVERIFY2(r.out.contains(text), text);
        auto same =
            faultlineRun({"compare", dir.filePath("reference.h5"), dir.filePath("reference.h5"), "--quiet"});
        QCOMPARE(same.exitCode, 0);

        const QString a = dir.filePath("lzf-a.h5"), b = dir.filePath("lzf-b.h5");
        const QString script = QStringLiteral(
            "import h5py, numpy as np, sys\n"
            "for n, v in ((sys.argv[1], 1.0), (sys.argv[2], 2.0)):\n"
            "    with h5py.File(n, 'w') as f:\n"
            "        f.create_dataset('packed', data=np.arange(100, dtype='f4'), compression='lzf')\n"
            "        f['plain'] = np.full(10, v, 'f4')\n");
        auto made = test::runProcess(test::pythonPath(), {"-c", script, a, b});
        QVERIFY2(made.exitCode == 0, made.err.constData());
        auto unreadable = faultlineRun({"compare", a, b, "--quiet", "--json"});
        QCOMPARE(unreadable.exitCode, 2);
        QVERIFY2(unreadable.err.contains("error: ") && unreadable.err.contains("lzf-a.h5") &&
                     unreadable.err.contains("packed"),
                 unreadable.err.constData());
        const QJsonObject o = QJsonDocument::fromJson(unreadable.out).object();
        QCOMPARE(o["tensors"].toArray().size(), 1);
        QCOMPARE(o["tensors"].toArray()[0].toObject()["mismatches"].toInt(), 10);
        QCOMPARE(o["errors"].toArray().size(), 1);
    }

    // Dataset names and strings that are not UTF-8 (HDF5 allows any bytes) never crash the JSON
    // output of compare or inspect: the document is written, invalid bytes replaced.
    void namesThatAreNotUtf8()
    {
        QTemporaryDir dir;
        const QString a = dir.filePath("bytes-a.h5"), b = dir.filePath("bytes-b.h5");
        const QString script = QStringLiteral(
            "import h5py, numpy as np, sys\n"
            "for n in sys.argv[1:]:\n"
            "    with h5py.File(n, 'w') as f:\n"
            "        f.create_dataset(b'w\\xff\\xfe', data=np.arange(4, dtype='f4'))\n"
            "        f.create_dataset(b's\\xff', data=np.array([b'\\xff\\x01' + n[-4:-3].encode()], "
            "dtype='S3'))\n");
        auto made = test::runProcess(test::pythonPath(), {"-c", script, a, b});
        QVERIFY2(made.exitCode == 0, made.err.constData());
        auto compared = faultlineRun({"compare", a, b, "--json", "--quiet", "--out", dir.filePath("out.h5")});
        QCOMPARE(compared.exitCode, 1);  // the strings differ
        const QJsonObject o = QJsonDocument::fromJson(compared.out).object();
        QCOMPARE(o["tensors"].toArray().size(), 1);
        QCOMPARE(o["records"].toArray().size(), 1);
        auto inspected = faultlineRun({"inspect", a, "--json"});
        QCOMPARE(inspected.exitCode, 0);
        QVERIFY(QJsonDocument::fromJson(inspected.out).isObject());
    }

    // With --allow-external, data behind external links is read from the file that holds it
    // (h5py's files, tests/fixtures/write_h5_links.py): the same values stored in place compare
    // bit-identical, and links into the file itself or into the other input open.
    void externalLinksAreReadFromTheirFile()
    {
        QTemporaryDir dir;
        FL_WRITE_FIXTURE("write_h5_links.py", QStringList{dir.path()});
        auto linked = faultlineRun({"compare", dir.filePath("top.h5"), dir.filePath("plain.h5"),
                                    "--allow-external", "--json", "--quiet"});
        QVERIFY2(linked.exitCode == 0, linked.err.constData());
        const QJsonArray tensors = QJsonDocument::fromJson(linked.out).object()["tensors"].toArray();
        QCOMPARE(tensors.size(), 9);
        for (const auto& t : tensors)
            QVERIFY2(t.toObject()["mismatches"].toInteger() == 0,
                     qPrintable(t.toObject()["name"].toString()));
        for (const auto& [a, b] : {std::pair{"self.h5", "self.h5"}, std::pair{"pair_a.h5", "pair_b.h5"}}) {
            auto r =
                faultlineRun({"compare", dir.filePath(a), dir.filePath(b), "--allow-external", "--quiet"});
            QVERIFY2(r.exitCode == 0, r.err.constData());
            QVERIFY2(r.out.contains("2 tensor(s) compared: 0 beyond tolerance, 2 bit-identical"),
                     r.out.constData());
        }
    }

    void outputMayNotBeAnInput()
    {
        const QString a = m_dir.filePath("in-a.safetensors"), b = m_dir.filePath("in-b.safetensors");
        QVERIFY(writeSnapshot(a, "w", {8, 8}, 1).isEmpty());
        QVERIFY(writeSnapshot(b, "w", {8, 8}, 2).isEmpty());
        QFile f(a);
        QVERIFY(f.open(QIODevice::ReadOnly));
        const QByteArray before = f.readAll();
        f.close();
        auto r = faultlineRun({"compare", a, b, "--out", a, "--quiet"});
        QCOMPARE(r.exitCode, 2);
        QVERIFY2(r.err.contains("is an input of this comparison"), r.err.constData());
        QVERIFY(f.open(QIODevice::ReadOnly));
        QCOMPARE(f.readAll(), before);  // the evidence is untouched
    }

    void reportThatCannotBeWrittenIsAnError()
    {
        const QString a = m_dir.filePath("full-a.safetensors");
        QVERIFY(writeSnapshot(a, "w", {8, 8}, 1).isEmpty());
        if (!QFile::exists("/dev/full")) QSKIP("no /dev/full on this machine");
        QProcess p;
        p.setStandardOutputFile("/dev/full");
        p.start(QStringLiteral(FAULTLINE_EXE), {"inspect", a});
        QVERIFY(p.waitForFinished(60000));
        QCOMPARE(p.exitCode(), 2);  // not 0: nobody got the report
        QVERIFY2(p.readAllStandardError().contains("standard output"), "no message about standard output");
    }

    void unreadablePathsSayWhy()
    {
        const QString loop = m_dir.filePath("loop-a");
        QVERIFY(QFile::link(m_dir.filePath("loop-b"), loop));
        QVERIFY(QFile::link(loop, m_dir.filePath("loop-b")));
        auto r = faultlineRun({"inspect", loop});
        QCOMPARE(r.exitCode, 2);
        QVERIFY2(r.err.contains("symbolic links") && !r.err.contains("no such file"), r.err.constData());
        auto dir = faultlineRun({"inspect", m_dir.path()});
        QCOMPARE(dir.exitCode, 2);
        QVERIFY2(dir.err.contains("is a directory"), dir.err.constData());
        // A FIFO is refused at once, never opened (opening it would wait for a writer forever).
        const QString fifo = m_dir.filePath("fifo.safetensors");
        QCOMPARE(::mkfifo(fifo.toLocal8Bit().constData(), 0600), 0);
        auto pipe = faultlineRun({"inspect", fifo});
        QVERIFY(!pipe.timedOut);
        QCOMPARE(pipe.exitCode, 2);
        QVERIFY2(pipe.err.contains("FIFO") && pipe.err.contains("fifo.safetensors"), pipe.err.constData());
    }
};

QTEST_GUILESS_MAIN(TestCliCompare)
#include "test_cli_compare.moc"
