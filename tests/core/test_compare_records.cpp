// Datasets that are not tensors (h5py's files, tests/fixtures/write_h5_records.py): read value by
// value and compared for equality, counts per field equal to numpy's count on the bytes, the
// first differences spelled out; every dataset of both files appears in the report (compared,
// not comparable, not compared with the reason, or unpaired).
#include <QFile>
#include <QTemporaryDir>
#include <QTest>

#include <nlohmann/json.hpp>
#include <set>

#include "core/TensorFile.h"
#include "core/compare/CompareJson.h"
#include "core/compare/CompareRun.h"
#include "core/report/CompareText.h"
#include "support/TestSupport.h"

using namespace faultline;

namespace {

std::set<std::string> namesOf(const std::vector<PairError>& v)
{
    std::set<std::string> out;
    for (const PairError& e : v) out.insert(e.name);
    return out;
}

const RecordDivergence* findRecord(const CompareReport& r, const std::string& name)
{
    for (const RecordDivergence& d : r.records)
        if (d.name == name) return &d;
    return nullptr;
}

const RecordDifference* firstDifference(const RecordDivergence& d, const std::string& field)
{
    for (const RecordDifference& x : d.differences)
        if (x.field == field) return &x;
    return nullptr;
}

}  // namespace

class TestCompareRecords : public QObject {
    Q_OBJECT
    QTemporaryDir m_dir;
    nlohmann::json m_expected;
    std::unique_ptr<TensorFile> m_suspect, m_reference;

private slots:
    void initTestCase()
    {
        QVERIFY(m_dir.isValid());
        FL_WRITE_FIXTURE("write_h5_records.py", QStringList{m_dir.path()});
        QFile f(m_dir.filePath("expected.json"));
        QVERIFY(f.open(QIODevice::ReadOnly));
        m_expected = nlohmann::json::parse(f.readAll().toStdString());
        auto s = openTensorFile(m_dir.filePath("suspect.h5").toStdString());
        auto r = openTensorFile(m_dir.filePath("reference.h5").toStdString());
        QVERIFY2(s.ok(), s.ok() ? "" : s.message().c_str());
        QVERIFY2(r.ok(), r.ok() ? "" : r.message().c_str());
        m_suspect = std::move(*s);
        m_reference = std::move(*r);
    }

    // Counts per field equal numpy's, byte order and long double padding do not count.
    void countsPerFieldAreNumpys()
    {
        auto report = compareFiles(*m_suspect, *m_reference);
        QVERIFY2(report.ok(), report.ok() ? "" : report.message().c_str());
        QVERIFY2(report->errors.empty(), report->errors.empty() ? "" : report->errors[0].message.c_str());
        QCOMPARE(report->records.size(), m_expected["records"].size());
        for (const auto& [name, want] : m_expected["records"].items()) {
            const RecordDivergence* d = findRecord(*report, name);
            QVERIFY2(d, name.c_str());
            QCOMPARE(d->elements, want["elements"].get<uint64_t>());
            QVERIFY2(d->mismatchedElements == want["mismatched_elements"].get<uint64_t>(), name.c_str());
            uint64_t total = 0;
            QCOMPARE(d->fields.size(), want["fields"].size());
            for (const RecordFieldCount& f : d->fields) {
                QVERIFY2(want["fields"].contains(f.name), (name + "." + f.name).c_str());
                QVERIFY2(f.mismatches == want["fields"][f.name].get<uint64_t>(),
                         (name + "." + f.name).c_str());
                total += f.mismatches;
            }
            QCOMPARE(d->mismatches, total);
        }
        // Differing datasets first, then by name.
        QCOMPARE(report->records.back().mismatches, uint64_t(0));
        QVERIFY(report->records.front().mismatches > 0);
    }

    void differencesAreSpelledOut()
    {
        auto report = compareFiles(*m_suspect, *m_reference);
        QVERIFY(report.ok());
        const RecordDivergence* optimizer = findRecord(*report, "optimizer");
        QVERIFY(optimizer && optimizer->differences.size() == 1);
        QCOMPARE(optimizer->differences[0].suspect, std::string("\"adamw\""));
        QCOMPARE(optimizer->differences[0].reference, std::string("\"adam\""));
        const RecordDivergence* table = findRecord(*report, "loss_table");
        QVERIFY(table);
        const RecordDifference* step = firstDifference(*table, "step");
        QVERIFY(step);
        QCOMPARE(step->element, uint64_t(30));
        QCOMPARE(step->suspect, std::string("999"));
        QCOMPARE(step->reference, std::string("30"));
        const RecordDifference* tag = firstDifference(*table, "tag");
        QVERIFY(tag && tag->suspect == "\"mainX\"" && tag->reference == "\"main\"");
        const RecordDifference* hist = firstDifference(*table, "hist");
        QVERIFY(hist && hist->element == 5 && hist->value == 0);
        const RecordDivergence* colour = findRecord(*report, "colour");
        QVERIFY(colour && !colour->differences.empty());
        for (const RecordDifference& x : colour->differences)
            QVERIFY2((std::set<std::string>{"RED", "GREEN", "BLUE"}.count(x.suspect)), x.suspect.c_str());
        const RecordDivergence* refs = findRecord(*report, "refs");
        QVERIFY(refs && refs->differences.size() == 1);
        QCOMPARE(refs->differences[0].suspect, std::string("/loss_table"));
        QCOMPARE(refs->differences[0].reference, std::string("/names"));
        const RecordDivergence* sequences = findRecord(*report, "sequences");
        QVERIFY(sequences && sequences->differences.size() == 1);
        QCOMPARE(sequences->differences[0].suspect, std::string("[4, 6, 7]"));
        QCOMPARE(sequences->differences[0].reference, std::string("[4, 5]"));
        const RecordDivergence* regions = findRecord(*report, "regions");
        QVERIFY(regions && regions->differences.size() == 1);
        QVERIFY2(regions->differences[0].suspect.find("(3,0)-(3,15)") != std::string::npos,
                 regions->differences[0].suspect.c_str());
    }

    // Nothing is dropped: every name of both files is compared, not comparable, not compared or
    // unpaired, and the files differ.
    void everyDatasetIsAccountedFor()
    {
        auto report = compareFiles(*m_suspect, *m_reference);
        QVERIFY(report.ok());
        const auto& want = m_expected;
        std::set<std::string> notComparable(want["not_comparable"].begin(), want["not_comparable"].end());
        QCOMPARE(namesOf(report->notComparable), notComparable);
        std::set<std::string> notCompared;
        for (const NotCompared& n : report->notCompared) notCompared.insert(n.name);
        QCOMPARE(notCompared,
                 (std::set<std::string>(want["not_compared"].begin(), want["not_compared"].end())));
        for (const NotCompared& n : report->notCompared) QVERIFY2(!n.reason.empty(), n.name.c_str());
        QCOMPARE(report->unpaired.size(), size_t(1));
        QCOMPARE(report->unpaired[0], (UnpairedTensor{"suspect", "only_in_suspect"}));
        std::set<std::string> accounted = notComparable;
        accounted.insert(notCompared.begin(), notCompared.end());
        for (const Divergence& d : report->tensors) accounted.insert(d.name);
        for (const RecordDivergence& d : report->records) accounted.insert(d.name);
        for (const UnpairedTensor& u : report->unpaired) accounted.insert(u.name);
        for (const TensorFile* f : {m_suspect.get(), m_reference.get()}) {
            for (const TensorInfo& t : f->tensors()) QVERIFY2(accounted.count(t.name), t.name.c_str());
            for (const RecordInfo& r : f->records()) QVERIFY2(accounted.count(r.name), r.name.c_str());
        }
        QVERIFY(reportDiffers(*report));
        // The reasons are specific.
        for (const PairError& e : report->notComparable)
            if (e.name == "table_vs_tensor")
                QVERIFY2(
                    e.message.find("compound {a: int64, b: float64} [20] (suspect) vs float64 tensor [20]") !=
                        std::string::npos,
                    e.message.c_str());
    }

    // A file compared with itself: every value equal, no difference (what is not comparable at
    // all stays listed).
    void aFileAgreesWithItself()
    {
        auto report = compareFiles(*m_suspect, *m_suspect);
        QVERIFY(report.ok());
        QVERIFY(report->notComparable.empty());
        for (const RecordDivergence& d : report->records) QVERIFY2(d.mismatches == 0, d.name.c_str());
        // + the suspect's side of table_vs_tensor, empty_vs_scalar, table_fields and only_in_suspect
        QCOMPARE(report->records.size(), m_expected["records"].size() + 4);
        QCOMPARE(report->notCompared.size(), size_t(3));  // + dangling_one
        QVERIFY(!reportDiffers(*report));
    }

    void jsonAndText()
    {
        auto report = compareFiles(*m_suspect, *m_reference);
        QVERIFY(report.ok());
        const nlohmann::json j = nlohmann::json::parse(compareReportToJson(*report).dump());
        QCOMPARE(j["records"].size(), m_expected["records"].size());
        QCOMPARE(j["summary"]["records_differ"].get<uint64_t>(), uint64_t(10));
        QCOMPARE(j["summary"]["not_comparable"].get<uint64_t>(), uint64_t(5));
        QCOMPARE(j["summary"]["not_compared"].get<uint64_t>(), uint64_t(2));
        QCOMPARE(j["summary"]["differ"].get<bool>(), true);
        const auto table = std::find_if(j["records"].begin(), j["records"].end(),
                                        [](const nlohmann::json& r) { return r["name"] == "loss_table"; });
        QVERIFY(table != j["records"].end());
        QCOMPARE((*table)["values"].get<uint64_t>(), uint64_t(50 * 7));
        QCOMPARE((*table)["mismatches"].get<uint64_t>(), uint64_t(8));
        QCOMPARE((*table)["fields"][4]["name"].get<std::string>(), std::string("hist"));
        QCOMPARE((*table)["fields"][4]["values"].get<uint64_t>(), uint64_t(150));
        const std::string text = compareText(*report);
        for (const char* line :
             {"12 other dataset(s) compared for equality: 10 differ, 2 identical",
              "≠ optimizer  string (variable length) []", "[0]: \"adamw\" vs \"adam\"",
              "not compared: vlen_tables: variable-length sequences of compound",
              "not comparable: shape_mismatch: shape [4, 4] (suspect) vs [4, 5] (reference)",
              "[5] hist[0]: "})
            QVERIFY2(text.find(line) != std::string::npos, line);
    }

    // Reads are bounded and errors name the file and the dataset.
    void readsNameTheFile()
    {
        const TensorFile& f = *m_suspect;
        size_t index = SIZE_MAX, vlen = SIZE_MAX;
        for (size_t i = 0; i < f.records().size(); ++i) {
            if (f.records()[i].name == "loss_table") index = i;
            if (f.records()[i].name == "vlen_tables") vlen = i;
        }
        QVERIFY(index != SIZE_MAX && vlen != SIZE_MAX);
        RecordBlock block;
        QVERIFY(f.readRecords(index, 48, 2, &block).ok());
        QCOMPARE(block.columns.size(), size_t(5));
        QCOMPARE(block.columns[4].bytes.size(), size_t(2 * 3 * 4));
        Status outside = f.readRecords(index, 49, 2, &block);
        QVERIFY(!outside.ok());
        QVERIFY2(outside.message().rfind(f.path() + ": dataset 'loss_table'", 0) == 0,
                 outside.message().c_str());
        Status unreadable = f.readRecords(vlen, 0, 1, &block);
        QVERIFY(!unreadable.ok());
        QVERIFY2(unreadable.message().find("variable-length sequences of compound") != std::string::npos,
                 unreadable.message().c_str());
    }
};

QTEST_GUILESS_MAIN(TestCompareRecords)
#include "test_compare_records.moc"
