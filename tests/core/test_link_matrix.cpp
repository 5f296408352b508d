// The per-directed-link matrix of a sweep (core/collectives/LinkMatrix.h): built from a sweep of
// 8 simulated ranks with a planted faulty link and a planted faulty GPU, written to a results
// file with the failing blocks, read back identically, the planted link's block compared (its
// mismatches are the words the link corrupted), the cut of large blocks, and bad files.
#include <QTemporaryDir>
#include <QtTest>
#include <cstring>

#include "core/collectives/CollectiveReplay.h"
#include "core/collectives/LinkMatrix.h"
#include "core/io/SnapshotWriter.h"
#include "core/replay/TensorLoad.h"
#include "support/CollectiveReplayTrace.h"

using namespace faultline;

namespace {

std::vector<std::string> group(const std::map<size_t, std::string>& planted)
{
    std::vector<std::string> targets;
    for (size_t i = 0; i < 8; ++i) {
        const auto p = planted.find(i);
        targets.push_back(p == planted.end() ? "sim:healthy" : p->second);
    }
    return targets;
}

// 8 ranks: GPU 3 flips bits; the link 5 -> 4 holds bit 30 at 1 in every word it carries.
SweepReport plantedSweep(uint64_t blockBytes = uint64_t(4) << 20, uint32_t reps = 1)
{
    SweepOptions o;
    o.targets = group({{3, "sim:flip:rate=0.01"}, {5, "sim:healthy:link_to=4,link_bit=30,link_value=1"}});
    o.bytes = 16384;
    o.reps = reps;
    o.blockBytes = blockBytes;
    auto r = runSweep(o);
    if (!r) qFatal("sweep failed: %s", r.message().c_str());
    return *r;
}

// The 32-bit words that differ between two datasets of a file.
uint64_t differingWords(const std::string& path, const std::string& a, const std::string& b)
{
    auto file = openTensorFile(path);
    if (!file) qFatal("%s", file.message().c_str());
    auto x = loadTensor(**file, a), y = loadTensor(**file, b);
    if (!x || !y || x->data.size() != y->data.size()) qFatal("cannot read the blocks");
    uint64_t n = 0;
    for (size_t i = 0; i + 4 <= x->data.size(); i += 4) n += std::memcmp(&x->data[i], &y->data[i], 4) != 0;
    return n;
}

Status writeFile(const std::string& path, const std::string& format, int64_t version, const std::string& json)
{
    auto w = SnapshotWriter::create(path, {.inMemory = true});
    if (!w) return w.error();
    Status st = w->setRootAttribute("faultline_format", format);
    if (st) st = w->setRootAttribute("faultline_version", version);
    if (st) st = w->writeTensor("report_json", DType::UInt8, {json.size()}, json.data());
    if (!st) return st;
    return w->close();
}

}  // namespace

class TestLinkMatrix : public QObject {
    Q_OBJECT
    QTemporaryDir m_dir;

private slots:
    void fromSweepReport()
    {
        const SweepReport r = plantedSweep();
        const LinkMatrix m = linkMatrixFromSweep(r);
        QCOMPARE(m.size(), size_t(8));
        QCOMPARE(m.kind, std::string("sweep"));
        QVERIFY(m.faultyGpus[3]);
        QCOMPARE(std::count(m.faultyGpus.begin(), m.faultyGpus.end(), true), 1);
        const LinkCell& bad = m.at(5, 4);
        QVERIFY(bad.faultyLink);
        QVERIFY(bad.corruptedBytes > 0);
        QCOMPARE(bad.failures, bad.transfers);
        QCOMPARE(bad.signature.empty(), false);
        QVERIFY(bad.hasBlock());
        QCOMPARE(bad.blockBytes, uint64_t(16384));
        QCOMPARE(m.faultyLinkCount(), size_t(1));
        // The opposite direction of the same pair passed; the diagonal is never tested.
        QVERIFY(m.at(4, 5).tested());
        QCOMPARE(m.at(4, 5).failures, uint64_t(0));
        QVERIFY(!m.at(4, 5).hasBlock());
        for (size_t i = 0; i < 8; ++i) QVERIFY(!m.at(i, i).tested());
        // Every transfer of the report is in the matrix.
        uint64_t reps = 0, cells = 0;
        for (const SweepRound& round : r.rounds)
            for (const SweepTransfer& t : round.transfers) reps += t.reps;
        for (const LinkCell& c : m.cells) cells += c.transfers;
        QCOMPARE(cells, reps);
        QVERIFY(m.maxGbps() > 0);
        QCOMPARE(m.maxCorruptedBytes() >= bad.corruptedBytes, true);
    }

    void resultsFileRoundTrip()
    {
        const SweepReport r = plantedSweep();
        const std::string path = m_dir.filePath("sweep.h5").toStdString();
        QVERIFY(writeSweepResults(path, r).ok());
        auto is = isSweepResultsFile(path);
        QVERIFY(is && *is);
        auto read = readSweepLinkMatrix(path);
        QVERIFY2(read, read ? "" : read.message().c_str());
        const LinkMatrix built = linkMatrixFromSweep(r);
        QCOMPARE(read->path, path);
        QCOMPARE(read->ranks, built.ranks);
        QCOMPARE(read->faultyGpus, built.faultyGpus);
        for (size_t i = 0; i < built.cells.size(); ++i) {
            const LinkCell &a = built.cells[i], &b = read->cells[i];
            QCOMPARE(b.transfers, a.transfers);
            QCOMPARE(b.failures, a.failures);
            QCOMPARE(b.corruptedBytes, a.corruptedBytes);
            QCOMPARE(b.faultyLink, a.faultyLink);
            QCOMPARE(b.signature, a.signature);
            QCOMPARE(b.hasBlock(), a.hasBlock());
            QCOMPARE(b.blockRep, a.blockRep);
            QCOMPARE(b.blockBytes, a.blockBytes);
        }
        // Every failing direction whose GPU answered stored its block.
        for (const LinkCell& c : read->cells) QCOMPARE(c.hasBlock(), c.failures > 0);
    }

    void blockComparisonCountsTheCorruptedWords()
    {
        const SweepReport r = plantedSweep();
        const std::string path = m_dir.filePath("compare.h5").toStdString();
        QVERIFY(writeSweepResults(path, r).ok());
        auto m = readSweepLinkMatrix(path);
        QVERIFY2(m, m ? "" : m.message().c_str());
        const LinkCell& bad = m->at(5, 4);
        auto cmp = compareLinkBlock(*m, 5, 4);
        QVERIFY2(cmp, cmp ? "" : cmp.message().c_str());
        QCOMPARE(cmp->report.tensors.size(), size_t(1));
        const Divergence& d = cmp->report.tensors.front();
        QCOMPARE(d.name, std::string("link 5->4"));
        QCOMPARE(d.elements, uint64_t(16384 / 4));
        const uint64_t words = differingWords(path, bad.blockExpected, bad.blockReceived);
        QVERIFY(words > 0);
        QCOMPARE(d.mismatches, words);
        // One stuck bit changes one byte of a word: with one repetition, bytes == words.
        QCOMPARE(d.mismatches, bad.corruptedBytes);
        QCOMPARE(cmp->received->path(), path + " link 5->4 received");
        // A healthy cell has nothing to compare, and says so.
        auto healthy = compareLinkBlock(*m, 4, 5);
        QVERIFY(!healthy);
        QVERIFY2(QString::fromStdString(healthy.message()).contains("it passed"), healthy.message().c_str());
        QVERIFY(!compareLinkBlock(*m, 9, 1));
    }

    void largeBlocksAreCut()
    {
        const SweepReport r = plantedSweep(4096, 2);
        const std::string path = m_dir.filePath("cut.h5").toStdString();
        QVERIFY(writeSweepResults(path, r).ok());
        auto m = readSweepLinkMatrix(path);
        QVERIFY2(m, m ? "" : m.message().c_str());
        const LinkCell& bad = m->at(5, 4);
        QCOMPARE(bad.blockBytes, uint64_t(4096));
        QCOMPARE(bad.blockTotalBytes, uint64_t(16384));
        auto file = openTensorFile(path);
        QVERIFY(file);
        const auto i = (*file)->find(bad.blockReceived);
        QVERIFY(i);
        const TensorInfo& info = (*file)->tensors()[*i];
        QCOMPARE(info.shape, (std::vector<uint64_t>{4, 256}));
        QCOMPARE(info.attributes.at("truncated"), std::string("1"));
        QCOMPARE(info.attributes.at("total_bytes"), std::string("16384"));
        QCOMPARE(info.attributes.at("rep"), std::string("0"));
        // No blocks kept: the matrix still reads, without blocks.
        SweepReport none = plantedSweep(0);
        const std::string bare = m_dir.filePath("bare.h5").toStdString();
        QVERIFY(writeSweepResults(bare, none).ok());
        auto n = readSweepLinkMatrix(bare);
        QVERIFY2(n, n ? "" : n.message().c_str());
        QVERIFY(n->at(5, 4).faultyLink);
        QVERIFY(!n->at(5, 4).hasBlock());
    }

    void badFilesNameTheFile_data()
    {
        QTest::addColumn<QString>("format");
        QTest::addColumn<int>("version");
        QTest::addColumn<QString>("json");
        QTest::addColumn<QString>("phrase");
        const QString ok = QStringLiteral(R"({"targets":["sim:healthy","sim:healthy"],"bytes":16,)"
                                          R"("gpus":[],"rounds":[],"links":[]})");
        QTest::newRow("campaign") << "campaign" << 1 << ok << "not a sweep results file";
        QTest::newRow("newer") << "sweep" << 2 << ok << "version 2";
        QTest::newRow("not json") << "sweep" << 1 << "{oops"
                                  << "not JSON";
        QTest::newRow("one target") << "sweep" << 1
                                    << R"({"targets":["a"],"bytes":16,"gpus":[],"rounds":[],"links":[]})"
                                    << "1 targets";
        QTest::newRow("rank out of range")
            << "sweep" << 1
            << R"({"targets":["a","b"],"bytes":16,"gpus":[],"rounds":[],"links":[{"src":0,"dst":7}]})"
            << "rank 7";
        QTest::newRow("wrong type")
            << "sweep" << 1
            << R"({"targets":["a","b"],"bytes":16,"gpus":[{"index":0,"faulty":"yes"}],"rounds":[],"links":[]})"
            << "malformed";
        QTest::newRow("float count")
            << "sweep" << 1 << R"({"targets":["a","b"],"bytes":1e300,"gpus":[],"rounds":[],"links":[]})"
            << "not a count";
        QTest::newRow("self transfer")
            << "sweep" << 1
            << R"({"targets":["a","b"],"bytes":16,"gpus":[],"links":[],"rounds":[{"pairs":[{"a":1,"b":1,)"
               R"("direction":"a->b","reps":1,"failures":0,"corrupted_bytes":0,"signature":null,"gbps":1}]}]})"
            << "to itself";
    }

    void badFilesNameTheFile()
    {
        QFETCH(QString, format);
        QFETCH(int, version);
        QFETCH(QString, json);
        QFETCH(QString, phrase);
        const std::string path = m_dir.filePath("bad.h5").toStdString();
        QVERIFY(writeFile(path, format.toStdString(), version, json.toStdString()).ok());
        auto m = readSweepLinkMatrix(path);
        QVERIFY(!m);
        const QString message = QString::fromStdString(m.message());
        QVERIFY2(message.startsWith(QString::fromStdString(path) + ": ") && message.contains(phrase),
                 qPrintable(message));
        QVERIFY(!message.contains('\n'));
    }

    void notHdf5IsAnError()
    {
        const QString path = m_dir.filePath("text.h5");
        QFile f(path);
        QVERIFY(f.open(QIODevice::WriteOnly));
        f.write("not hdf5");
        f.close();
        QVERIFY(!isSweepResultsFile(path.toStdString()));
        auto m = readSweepLinkMatrix(path.toStdString());
        QVERIFY(!m);
        QVERIFY(QString::fromStdString(m.message()).contains(path));
    }

    void otherProducersFillTheSameModel()
    {
        LinkMatrix m = makeLinkMatrix("collective", {"r0", "r1", "r2"});
        addLinkTransfers(m, 0, 2, 4, 1, 12, 4000, 2e-6, "random_flips");
        addLinkTransfers(m, 0, 2, 4, 0, 0, 4000, 2e-6, "");
        QCOMPARE(m.at(0, 2).transfers, uint64_t(8));
        QCOMPARE(m.at(0, 2).failures, uint64_t(1));
        QCOMPARE(m.at(0, 2).corruptedBytes, uint64_t(12));
        QCOMPARE(m.at(0, 2).signature, std::string("random_flips"));
        QCOMPARE(m.at(0, 2).gbps(), 8000 / 4e-6 / 1e9);
        QVERIFY(!m.at(2, 0).tested());
    }
    // A collective replay's results file (`faultline collective --out`) opens as the same
    // matrix: every link the rings used, the planted link marked with the bytes it corrupted,
    // the planted GPU marked; a malformed report names the file.
    void aCollectiveReplayFillsTheMatrix()
    {
        QTemporaryDir dir;
        const std::string trace = dir.filePath("trace.h5").toStdString();
        QCOMPARE(test::writeCollectiveTrace(trace, 8), std::string());
        CollectiveOptions o;
        o.tracePath = trace;
        o.targets = group({{6, "sim:flip:rate=0.01"}, {2, "sim:healthy:link_to=3,link_rate=0.01"}});
        o.ops = "0,1";
        auto report = runCollectiveReplay(o);
        QVERIFY2(report.ok(), report.ok() ? "" : report.message().c_str());
        const nlohmann::json json = collectiveJson(*report);
        const std::string path = dir.filePath("collective.h5").toStdString();
        {
            auto w = SnapshotWriter::create(path);
            QVERIFY(w.ok());
            const std::string text = json.dump();
            QVERIFY(w->setRootAttribute("faultline_format", std::string("collective")).ok());
            QVERIFY(w->setRootAttribute("faultline_version", int64_t(1)).ok());
            QVERIFY(w->writeTensor("report_json", DType::UInt8, {text.size()}, text.data()).ok());
            QVERIFY(w->close().ok());
        }
        QVERIFY(isLinkResultsFile(path).value());
        QVERIFY(!isSweepResultsFile(path).value());
        auto m = readLinkMatrix(path);
        QVERIFY2(m.ok(), m.ok() ? "" : m.message().c_str());
        QCOMPARE(m->kind, std::string("collective"));
        QCOMPARE(m->size(), size_t(8));
        QCOMPARE(m->faultyLinkCount(), size_t(1));
        QVERIFY(m->at(2, 3).faultyLink);
        QVERIFY(m->faultyGpus[6]);
        QCOMPARE(std::count(m->faultyGpus.begin(), m->faultyGpus.end(), true), 1);
        size_t links = 0;
        for (const nlohmann::json& l : json["links"]) {
            const LinkCell& c = m->at(l["src"].get<size_t>(), l["dst"].get<size_t>());
            QCOMPARE(c.transfers, l["transfers"].get<uint64_t>());
            QCOMPARE(c.corruptedBytes, l["corrupted_bytes"].get<uint64_t>());
            ++links;
        }
        QCOMPARE(links, size_t(16));  // the ring and its reverse
        QVERIFY(m->at(2, 3).corruptedBytes > 0);
        QVERIFY(!m->at(0, 4).tested());  // not neighbours on either ring
        QVERIFY(!m->at(2, 3).hasBlock());

        nlohmann::json bad = json;
        bad["links"][0]["src"] = 99;
        QVERIFY(!linkMatrixFromCollectiveJson(bad, "c.h5"));
        QVERIFY(QString::fromStdString(linkMatrixFromCollectiveJson(bad, "c.h5").message()).contains("c.h5"));
        bad = json;
        bad["links"][0]["failures"] = bad["links"][0]["transfers"].get<uint64_t>() + 1;
        QVERIFY(!linkMatrixFromCollectiveJson(bad, "c.h5"));
    }
};

QTEST_GUILESS_MAIN(TestLinkMatrix)
#include "test_link_matrix.moc"
