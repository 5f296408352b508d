// Comparing two whole files (core/compare/CompareRun.h) held in MemoryTensorFiles
// (core/io/MemoryTensorFile.h): ranking, per-tensor errors that do not stop the run, progress,
// cancellation by callback and by flag, bounds per tensor, and results independent of the thread
// count.
#include <QJsonDocument>
#include <QJsonObject>
#include <QTemporaryDir>
#include <QtTest>

#include <atomic>
#include <mutex>
#include <set>

#include "core/compare/CompareJson.h"
#include "core/compare/CompareResultsFile.h"
#include "core/compare/CompareRun.h"
#include "core/io/MemoryTensorFile.h"
#include "core/io/SnapshotWriter.h"
#include "support/TestSupport.h"
#include "test_compare_helpers.h"

using faultline::DType;
using faultline::MemoryTensorFile;
using namespace fltest;

namespace {

void add(MemoryTensorFile& f, const std::string& name, const Tensor& t)
{
    faultline::Status s = f.add(name, t.dtype, t.shape, pack(t));
    QVERIFY2(s.ok(), s.message().c_str());
}

// suspect/reference files with: "clean" (identical), "noise" (1 ulp, 30%), "nan" (3 NaNs),
// "big" (one element far off), "unpaired_s" / "unpaired_r", "shape" (shape mismatch), "bad"
// (reads fail on the suspect side).
void makeFiles(MemoryTensorFile& s, MemoryTensorFile& r)
{
    Tensor clean = randomTensor(DType::Float32, {64, 64}, 1);
    add(s, "clean", clean);
    add(r, "clean", clean);
    Tensor noise = randomTensor(DType::BFloat16, {100, 100}, 2);
    Tensor noiseS = noise;
    addRoundingNoise(noiseS, 0.3, 3, 1);
    add(s, "noise", noiseS);
    add(r, "noise", noise);
    Tensor nan = randomTensor(DType::Float32, {300, 40}, 4);
    Tensor nanS = nan;
    for (size_t i : {5u, 600u, 11000u}) nanS.bits[i] = 0x7fc00000;
    add(s, "nan", nanS);
    add(r, "nan", nan);
    Tensor big = randomTensor(DType::Float16, {50, 50}, 5);
    Tensor bigS = big;
    bigS.bits[77] ^= 0x4000;
    add(s, "big", bigS);
    add(r, "big", big);
    add(s, "unpaired_s", clean);
    add(r, "unpaired_r", clean);
    add(s, "shape", randomTensor(DType::Float32, {4, 8}, 6));
    add(r, "shape", randomTensor(DType::Float32, {8, 4}, 6));
    add(s, "bad", clean);
    add(r, "bad", clean);
    s.failReadsOf("bad");
}

}  // namespace

class TestCompareRun : public QObject {
    Q_OBJECT

private slots:
    void rankingAndErrors();
    void progressIsMonotonic();
    void cancelByCallback();
    void cancelByFlag();
    void threadCountDoesNotMatter();
    void boundSource();
    void memoryFile();
    void sinkSeesEachTensorOnce();
    void sinkErrorStopsRun();
    void resultsFileStreamed();
    void resultsFileReadsBack();
    void resultsFileReadBackRefusesOtherFiles();
    void mappedFilesGiveTheSameResults();
};

void TestCompareRun::rankingAndErrors()
{
    MemoryTensorFile s("suspect.h5"), r("reference.h5");
    makeFiles(s, r);
    faultline::CompareRunOptions o;
    o.compare.tolerance = faultline::Tolerance::ulp(1);
    auto rep = faultline::compareFiles(s, r, o);
    QVERIFY2(rep.ok(), rep.ok() ? "" : rep.message().c_str());
    QCOMPARE(rep->suspect, std::string("suspect.h5"));
    QCOMPARE(rep->reference, std::string("reference.h5"));
    QStringList order;
    for (const auto& d : rep->tensors) order << QString::fromStdString(d.name);
    // NaN first, then beyond tolerance, then within (noise: 1 ulp) before identical (0 ulp).
    QCOMPARE(order, QStringList({"nan", "big", "noise", "clean"}));
    QCOMPARE(rep->tensors[0].signature.kind, faultline::SignatureKind::NanInf);
    QCOMPARE(rep->tensors[0].nanIntroduced, uint64_t(3));
    QCOMPARE(rep->tensors[1].mismatches, uint64_t(1));
    QCOMPARE(rep->tensors[2].signature.kind, faultline::SignatureKind::Rounding);
    QCOMPARE(rep->tensors[3].signature.kind, faultline::SignatureKind::Identical);
    QCOMPARE(rep->unpaired.size(), size_t(2));
    QCOMPARE(rep->unpaired[0], (faultline::UnpairedTensor{"suspect", "unpaired_s"}));
    QCOMPARE(rep->unpaired[1], (faultline::UnpairedTensor{"reference", "unpaired_r"}));
    QCOMPARE(rep->notComparable.size(), size_t(1));
    QCOMPARE(rep->notComparable[0].name, std::string("shape"));
    QCOMPARE(rep->errors.size(), size_t(1));
    QCOMPARE(rep->errors[0].name, std::string("bad"));
    QVERIFY2(QString::fromStdString(rep->errors[0].message).startsWith("suspect.h5: bad"),
             rep->errors[0].message.c_str());
    QVERIFY(faultline::reportDiffers(*rep));
}

void TestCompareRun::progressIsMonotonic()
{
    MemoryTensorFile s, r;
    makeFiles(s, r);
    faultline::CompareRunOptions o;
    o.compare.chunkElements = 500;
    o.compare.threads = 2;
    std::vector<double> seen;
    QStringList what;
    auto rep = faultline::compareFiles(s, r, o, [&](double f, const std::string& w) {
        seen.push_back(f);
        what << QString::fromStdString(w);
        return true;
    });
    QVERIFY(rep.ok());
    QVERIFY(seen.size() > 10);
    for (size_t i = 1; i < seen.size(); ++i) QVERIFY2(seen[i] >= seen[i - 1], qPrintable(QString::number(i)));
    QCOMPARE(seen.back(), 1.0);
    QVERIFY(seen.front() >= 0.0);
    QVERIFY(what.contains("nan"));
    QVERIFY(what.contains("noise"));
}

void TestCompareRun::cancelByCallback()
{
    MemoryTensorFile s, r;
    makeFiles(s, r);
    faultline::CompareRunOptions o;
    o.compare.chunkElements = 100;
    for (unsigned threads : {1u, 3u}) {
        o.compare.threads = threads;
        int calls = 0;
        auto rep = faultline::compareFiles(s, r, o, [&](double, const std::string&) { return ++calls < 3; });
        QVERIFY(!rep.ok());
        QCOMPARE(rep.message(), std::string(faultline::kCompareCancelled));
        QVERIFY(calls < 20);  // stopped soon after asking
    }
}

void TestCompareRun::cancelByFlag()
{
    MemoryTensorFile s, r;
    makeFiles(s, r);
    std::atomic<bool> cancel{true};
    auto rep = faultline::compareFiles(s, r, {}, {}, &cancel);
    QVERIFY(!rep.ok());
    QCOMPARE(rep.message(), std::string(faultline::kCompareCancelled));

    // Set while running (from the progress callback, as a GUI thread would).
    cancel = false;
    faultline::CompareRunOptions o;
    o.compare.chunkElements = 100;
    o.compare.threads = 2;
    int calls = 0;
    rep = faultline::compareFiles(
        s, r, o,
        [&](double, const std::string&) {
            if (++calls == 5) cancel = true;
            return true;
        },
        &cancel);
    QVERIFY(!rep.ok());
    QCOMPARE(rep.message(), std::string(faultline::kCompareCancelled));

    // A TensorComparer alone honours the flag too.
    faultline::TensorComparer c;
    cancel = true;
    c.setCancelFlag(&cancel);
    QCOMPARE(c.compare(s, 0, r, 0).message(), std::string(faultline::kCompareCancelled));
}

void TestCompareRun::threadCountDoesNotMatter()
{
    MemoryTensorFile s, r;
    makeFiles(s, r);
    // A bigger tensor with a defect and noise, in many chunks.
    Tensor ref = randomTensor(DType::Float32, {333, 517}, 9);
    Tensor sus = ref;
    addRoundingNoise(sus, 0.3, 10);
    for (uint64_t row = 40; row < 104; ++row)
        for (uint64_t col = 64; col < 128; ++col) sus.bits[size_t(row * 517 + col)] ^= 0x00600000;
    add(s, "tile", sus);
    add(r, "tile", ref);

    faultline::CompareRunOptions o;
    o.compare.tolerance = faultline::Tolerance::ulp(1);
    o.compare.chunkElements = 4000;
    faultline::CompareJsonOptions all{true, true};
    std::string first;
    for (unsigned threads : {1u, 2u, 4u, 7u}) {
        o.compare.threads = threads;
        auto rep = faultline::compareFiles(s, r, o);
        QVERIFY(rep.ok());
        const std::string json = faultline::compareReportToJson(*rep, all).dump();
        if (first.empty())
            first = json;
        else
            QVERIFY2(json == first, qPrintable(QString("threads %1 differ").arg(threads)));
    }
    QVERIFY(first.find("tile_clustered") != std::string::npos);
}

void TestCompareRun::boundSource()
{
    MemoryTensorFile s, r;
    Tensor ref = randomTensor(DType::Float32, {10, 10}, 1);
    Tensor sus = ref;
    sus.bits[3] += 1000;
    add(s, "a", sus);
    add(r, "a", ref);
    add(s, "b", sus);
    add(r, "b", ref);
    faultline::CompareRunOptions o;
    o.compare.tolerance = faultline::Tolerance::bound();
    QVERIFY(!faultline::compareFiles(s, r, o).ok());  // no bounds given

    faultline::CompareRun run(o);
    std::mutex m;
    std::set<std::string> keys;
    run.setBoundSource([&](const std::string& key, uint64_t, uint64_t count, double* b) {
        std::lock_guard lock(m);
        keys.insert(key);
        std::fill(b, b + count, key == "a" ? 1.0 : 0.0);  // a: generous, b: exact
        return faultline::Status::success();
    });
    auto rep = run.run(s, r);
    QVERIFY(rep.ok());
    QCOMPARE(keys, (std::set<std::string>{"a", "b"}));
    for (const auto& d : rep->tensors) QCOMPARE(d.beyondTolerance, uint64_t(d.name == "a" ? 0 : 1));
}

void TestCompareRun::memoryFile()
{
    MemoryTensorFile f("mem.h5");
    QCOMPARE(f.path(), std::string("mem.h5"));
    QCOMPARE(f.format(), faultline::FileFormat::Snapshot);
    std::vector<float> v = {1, 2, 3, 4, 5, 6};
    QVERIFY(f.addValues("/grp/x", DType::Float32, {2, 3}, v, {{"kind", "weight"}}).ok());
    QCOMPARE(f.tensors().size(), size_t(1));
    QCOMPARE(f.tensors()[0].name, std::string("grp/x"));
    QCOMPARE(f.tensors()[0].kind, std::string("weight"));
    QCOMPARE(f.find("/grp/x").value_or(9), size_t(0));
    // Errors name the file and the tensor.
    auto dup = f.addValues("grp/x", DType::Float32, {6}, v);
    QVERIFY(!dup.ok());
    QVERIFY(QString::fromStdString(dup.message()).startsWith("mem.h5: grp/x"));
    QVERIFY(!f.addValues("y", DType::Float32, {7}, v).ok());  // 6 values for 7 elements
    QVERIFY(!f.addValues("z", DType::Float16, {6}, v).ok());  // element size
    float out[3] = {};
    QVERIFY(f.read(0, 2, 3, out).ok());
    QCOMPARE(out[0], 3.0f);
    QCOMPARE(out[2], 5.0f);
    auto bad = f.read(0, 4, 3, out);
    QVERIFY(!bad.ok());
    QVERIFY2(QString::fromStdString(bad.message()).contains("out of range"), bad.message().c_str());
    QVERIFY(!f.read(5, 0, 1, out).ok());
    f.setAttribute("device", "GPU-3");
    QCOMPARE(f.attributes().at("device"), std::string("GPU-3"));
    f.addWarning("w");
    QCOMPARE(f.warnings().size(), size_t(1));
}

QTEST_APPLESS_MAIN(TestCompareRun)
#include "test_compare_run.moc"

// The sink gets every compared tensor once, in pairing order, before it joins the report; what
// it releases (the tile counts) is gone from the report, the rest (geometry, statistics) stays.
void TestCompareRun::sinkSeesEachTensorOnce()
{
    MemoryTensorFile s, r;
    makeFiles(s, r);
    faultline::CompareRun run;
    std::vector<std::pair<size_t, std::string>> seen;
    uint64_t tilesSeen = 0;
    run.setTensorSink([&](size_t index, faultline::Divergence& d) {
        seen.emplace_back(index, d.name);
        if (d.tiles.hasCounts())
            for (uint64_t m : d.tiles.levels().front().mismatches) tilesSeen += m;
        d.tiles.releaseCounts();
        return faultline::Status{};
    });
    auto rep = run.run(s, r);
    QVERIFY2(rep.ok(), rep.ok() ? "" : rep.message().c_str());
    // Pairing order: by name on the suspect side (the pairs that compared; shape and bad fail).
    QCOMPARE(seen.size(), rep->tensors.size());
    std::set<std::string> names;
    uint64_t mismatches = 0;
    for (size_t i = 0; i < seen.size(); ++i) {
        if (i > 0) QVERIFY(seen[i].first > seen[i - 1].first);
        names.insert(seen[i].second);
    }
    for (const auto& d : rep->tensors) {
        QVERIFY(names.count(d.name) == 1);
        QVERIFY(!d.tiles.hasCounts());
        QVERIFY(!d.tiles.levels().empty());  // the geometry stays for the JSON "tile" field
        for (const faultline::TileLevel& l : d.tiles.levels())  // and the memory is returned
            QVERIFY(l.mismatches.capacity() == 0 && l.maxAbsError.capacity() == 0);
        mismatches += d.mismatches;
    }
    QCOMPARE(tilesSeen, mismatches);
    QVERIFY(mismatches > 0);
}

void TestCompareRun::sinkErrorStopsRun()
{
    MemoryTensorFile s, r;
    makeFiles(s, r);
    faultline::CompareRun run;
    int calls = 0;
    run.setTensorSink([&](size_t, faultline::Divergence&) {
        return ++calls == 2 ? faultline::Status(faultline::Error{"results.h5: disk full"})
                            : faultline::Status{};
    });
    auto rep = run.run(s, r);
    QVERIFY(!rep.ok());
    QCOMPARE(rep.message(), std::string("results.h5: disk full"));
    QCOMPARE(calls, 2);
}

// A results file written as the run goes holds every pair under its pairing index, with its
// rank in the report, and level-0 tile counts that add up to the tensor's mismatches.
void TestCompareRun::resultsFileStreamed()
{
    if (faultline::test::pythonPath().isEmpty()) QSKIP("no python3 with h5py to read the results file back");
    MemoryTensorFile s, r;
    makeFiles(s, r);
    QTemporaryDir dir;
    const std::string path = (dir.path() + "/results.h5").toStdString();
    auto w = faultline::CompareResultsWriter::create(path);
    QVERIFY(w.ok());
    faultline::CompareRun run;
    run.setTensorSink([&](size_t index, faultline::Divergence& d) {
        faultline::Status st = w->addPair(index, d);
        d.tiles.releaseCounts();
        return st;
    });
    auto rep = run.run(s, r);
    QVERIFY(rep.ok());
    QVERIFY(!QFile::exists(QString::fromStdString(path)));  // PATH.tmp until finish()
    faultline::Status st = w->finish(*rep);
    QVERIFY2(st.ok(), st.message().c_str());

    const QString script = QStringLiteral(
        "import h5py, json, sys\n"
        "f = h5py.File(sys.argv[1], 'r')\n"
        "out = {'format': f.attrs['faultline_format'], 'report': "
        "json.loads(bytes(f['report_json'][()]).decode()),\n"
        "       'pairs': {}}\n"
        "for k, g in f['pairs'].items():\n"
        "    t = g['tiles/0/mismatches'][()].sum() if 'tiles' in g else 0\n"
        "    out['pairs'][k] = {'name': g.attrs['name'], 'rank': int(g.attrs['report_rank']), 'tiles0': "
        "int(t)}\n"
        "print(json.dumps(out))\n");
    const auto res = faultline::test::runProcess(faultline::test::pythonPath(),
                                                 {"-c", script, QString::fromStdString(path)});
    QVERIFY2(res.exitCode == 0, res.err.constData());
    const QJsonObject j = QJsonDocument::fromJson(res.out).object();
    QCOMPARE(j["format"].toString(), QStringLiteral("compare"));
    const QJsonObject pairs = j["pairs"].toObject();
    QCOMPARE(size_t(pairs.size()), rep->tensors.size());
    for (const QString& key : pairs.keys()) {
        const QJsonObject p = pairs[key].toObject();
        const int rank = p["rank"].toInt();
        QVERIFY(rank >= 0 && size_t(rank) < rep->tensors.size());
        const faultline::Divergence& d = rep->tensors[size_t(rank)];
        QCOMPARE(p["name"].toString().toStdString(), d.name);
        QCOMPARE(uint64_t(p["tiles0"].toDouble()), d.mismatches);
        const auto reportTensors = j["report"].toObject()["tensors"].toArray();
        QCOMPARE(reportTensors[rank].toObject()["name"].toString().toStdString(), d.name);
    }
}

// readCompareResults gives back what was written: every tensor's JSON (statistics, signature,
// top elements and every tile level's counts) equal to the original's, in report order.
void TestCompareRun::resultsFileReadsBack()
{
    MemoryTensorFile s, r;
    makeFiles(s, r);
    faultline::CompareRun run;
    auto rep = run.run(s, r);
    QVERIFY(rep.ok());
    QVERIFY(!rep->tensors.empty());
    QTemporaryDir dir;
    const std::string path = (dir.path() + "/results.h5").toStdString();
    faultline::Status st = faultline::writeCompareResults(path, *rep);
    QVERIFY2(st.ok(), st.message().c_str());
    auto back = faultline::readCompareResults(path);
    QVERIFY2(back.ok(), back.ok() ? "" : back.message().c_str());
    QCOMPARE(back->tensors.size(), rep->tensors.size());
    QCOMPARE(back->tolerance.toString(), rep->tolerance.toString());
    faultline::CompareJsonOptions withTiles;
    withTiles.tiles = true;
    bool someTiles = false;
    for (size_t i = 0; i < rep->tensors.size(); ++i) {
        const nlohmann::json want = faultline::divergenceToJson(rep->tensors[i], withTiles);
        const nlohmann::json got = faultline::divergenceToJson(back->tensors[i], withTiles);
        std::string differ;
        for (const auto& [key, value] : want.items())
            if (!got.contains(key) || got[key] != value) differ += " " + key;
        QVERIFY2(got == want, (rep->tensors[i].name + " differs in:" + differ).c_str());
        someTiles = someTiles || back->tensors[i].tiles.hasCounts();
    }
    QVERIFY(someTiles);
}

void TestCompareRun::resultsFileReadBackRefusesOtherFiles()
{
    QTemporaryDir dir;
    const std::string path = (dir.path() + "/snapshot.h5").toStdString();
    auto w = faultline::SnapshotWriter::create(path);
    QVERIFY(w.ok());
    const float x[2] = {1, 2};
    QVERIFY(w->writeTensor("x", faultline::DType::Float32, {2}, x).ok());
    QVERIFY(w->close().ok());
    auto back = faultline::readCompareResults(path);
    QVERIFY(!back.ok());
    QVERIFY2(back.message().rfind(path + ": not a compare results file", 0) == 0, back.message().c_str());
    QCOMPARE(back.code(), faultline::ErrorCode::Format);
}

// HDF5 files whose tensors are scanned in place (mapped, released chunk by chunk) give exactly
// the report of the same tensors read through copies (MemoryTensorFile).
void TestCompareRun::mappedFilesGiveTheSameResults()
{
    QTemporaryDir dir;
    MemoryTensorFile ms("suspect"), mr("reference");
    Tensor wide = randomTensor(DType::Float32, {333, 257}, 11);
    Tensor wideS = wide;
    addRoundingNoise(wideS, 0.3, 2, 12);
    wideS.bits[4000] ^= 0x00400000;
    Tensor half = randomTensor(DType::BFloat16, {100, 100}, 13);
    Tensor halfS = half;
    addRoundingNoise(halfS, 0.2, 1, 14);
    const std::vector<std::pair<std::string, std::pair<Tensor, Tensor>>> tensors = {{"wide", {wideS, wide}},
                                                                                    {"half", {halfS, half}}};
    const std::string sp = (dir.path() + "/s.h5").toStdString(), rp = (dir.path() + "/r.h5").toStdString();
    {
        auto ws = faultline::SnapshotWriter::create(sp);
        auto wr = faultline::SnapshotWriter::create(rp);
        QVERIFY(ws.ok() && wr.ok());
        for (const auto& [name, pair] : tensors) {
            const auto bs = pack(pair.first), br = pack(pair.second);
            QVERIFY(ws->writeTensor(name, pair.first.dtype, pair.first.shape, bs.data()).ok());
            QVERIFY(wr->writeTensor(name, pair.second.dtype, pair.second.shape, br.data()).ok());
            add(ms, name, pair.first);
            add(mr, name, pair.second);
        }
        QVERIFY(ws->close().ok() && wr->close().ok());
    }
    auto fs = faultline::openTensorFile(sp);
    auto fr = faultline::openTensorFile(rp);
    QVERIFY(fs.ok() && fr.ok());
    for (size_t i = 0; i < (*fs)->tensors().size(); ++i) QVERIFY((*fs)->mappedData(i) != nullptr);
    faultline::CompareRunOptions o;
    o.compare.chunkElements = 1000;  // many chunks, boundaries inside pages
    o.compare.threads = 3;
    o.compare.tolerance = faultline::Tolerance::ulp(1);
    auto fromFiles = faultline::compareFiles(**fs, **fr, o);
    auto fromMemory = faultline::compareFiles(ms, mr, o);
    QVERIFY(fromFiles.ok() && fromMemory.ok());
    QCOMPARE(fromFiles->tensors.size(), size_t(2));
    for (size_t i = 0; i < 2; ++i) {
        QVERIFY(fromFiles->tensors[i].mismatches > 0);
        QCOMPARE(faultline::divergenceToJson(fromFiles->tensors[i]).dump(),
                 faultline::divergenceToJson(fromMemory->tensors[i]).dump());
    }
}
