// Data that lives outside the opened HDF5 file (external links, external raw storage, virtual
// datasets; files written by h5py, tests/fixtures/write_h5_links.py) is read from the file that
// holds it, in every layout, through read() and the in-place scan alike; external links back into
// the file itself and into the other input of a comparison open as they do in h5diff.
#include <QFile>
#include <QTemporaryDir>
#include <QTest>

#include <cstring>
#include <nlohmann/json.hpp>

#include "core/TensorFile.h"
#include "core/compare/CompareRun.h"
#include "support/TestSupport.h"

using namespace faultline;

namespace {

// The bytes of `values` as the tensor's dtype (float32 or int64, the fixture's two).
QByteArray expectedBytes(const TensorInfo& t, const nlohmann::json& values)
{
    QByteArray out;
    for (const auto& v : values) {
        if (t.dtype == DType::Int64) {
            const int64_t x = int64_t(v.get<double>());
            out.append(reinterpret_cast<const char*>(&x), sizeof x);
        } else {
            const float x = v.get<float>();
            out.append(reinterpret_cast<const char*>(&x), sizeof x);
        }
    }
    return out;
}

QByteArray readAll(const TensorFile& f, size_t index)
{
    const TensorInfo& t = f.tensors()[index];
    QByteArray out(qsizetype(t.byteCount()), '\0');
    // Odd piece sizes: ranges that cross chunk and row edges.
    const uint64_t piece = 7;
    for (uint64_t first = 0; first < t.elementCount(); first += piece) {
        const uint64_t n = std::min(piece, t.elementCount() - first);
        const Status s = f.read(index, first, n, out.data() + first * dtypeSize(t.dtype));
        if (!s) return QByteArray("ERROR: ") + s.message().c_str();
    }
    return out;
}

}  // namespace

class TestHdf5External : public QObject {
    Q_OBJECT
    QTemporaryDir m_dir;
    nlohmann::json m_values;

    std::string path(const char* name) const { return m_dir.filePath(name).toStdString(); }
    static OpenOptions allowed()
    {
        OpenOptions o;
        o.allowExternal = true;
        return o;
    }

private slots:
    void initTestCase()
    {
        QVERIFY(m_dir.isValid());
        FL_WRITE_FIXTURE("write_h5_links.py", QStringList{m_dir.path()});
        QFile f(m_dir.filePath("values.json"));
        QVERIFY(f.open(QIODevice::ReadOnly));
        m_values = nlohmann::json::parse(f.readAll().toStdString());
    }

    // Every tensor of top.h5 reads as the values written, whatever holds it and however it is
    // stored; where the in-place scan is offered it shows the same bytes.
    void everyLayoutReadsFromTheFileThatHoldsIt()
    {
        auto top = openTensorFile(path("top.h5"), allowed());
        QVERIFY2(top.ok(), top.ok() ? "" : top.message().c_str());
        const TensorFile& f = **top;
        QCOMPARE(f.tensors().size(), m_values.size());
        for (size_t i = 0; i < f.tensors().size(); ++i) {
            const TensorInfo& t = f.tensors()[i];
            QVERIFY2(m_values.contains(t.name), t.name.c_str());
            const QByteArray expected = expectedBytes(t, m_values[t.name]);
            QVERIFY2(readAll(f, i) == expected, t.name.c_str());
            if (const void* p = f.mappedData(i))
                QVERIFY2(std::memcmp(p, expected.constData(), size_t(expected.size())) == 0, t.name.c_str());
        }
        // Contiguous data behind an external link is scanned in place in the file that holds it.
        for (const char* name : {"own", "contiguous", "group/inner", "group/ints"}) {
            const auto i = f.find(name);
            QVERIFY2(i && f.mappedData(*i) != nullptr, name);
        }
    }

    // Compared with a file holding the same values in place, everything is bit-identical (before
    // the fix, a linked contiguous dataset was read at its holder's offset from top.h5).
    void comparedWithTheSameValuesStoredInPlaceIsIdentical()
    {
        auto top = openTensorFile(path("top.h5"), allowed());
        auto plain = openTensorFile(path("plain.h5"), allowed());
        QVERIFY2(top.ok(), top.ok() ? "" : top.message().c_str());
        QVERIFY2(plain.ok(), plain.ok() ? "" : plain.message().c_str());
        for (bool swap : {false, true}) {
            const TensorFile& s = swap ? **plain : **top;
            const TensorFile& r = swap ? **top : **plain;
            auto report = compareFiles(s, r);
            QVERIFY2(report.ok(), report.ok() ? "" : report.message().c_str());
            QCOMPARE(report->tensors.size(), m_values.size());
            QVERIFY(report->errors.empty());
            QVERIFY(report->unpaired.empty());
            for (const Divergence& d : report->tensors) QVERIFY2(d.mismatches == 0, d.name.c_str());
        }
    }

    // A link back into the file itself opens (h5diff follows it; HDF5 refused it while the file
    // was open with another close degree than the one external links open with).
    void linkBackIntoItsOwnFile()
    {
        auto self = openTensorFile(path("self.h5"), allowed());
        QVERIFY2(self.ok(), self.ok() ? "" : self.message().c_str());
        const TensorFile& f = **self;
        const auto again = f.find("again"), x = f.find("x");
        QVERIFY(again && x);
        QCOMPARE(readAll(f, *again), readAll(f, *x));
        auto report = compareFiles(f, f);
        QVERIFY2(report.ok(), report.ok() ? "" : report.message().c_str());
        QCOMPARE(report->tensors.size(), size_t(2));
        for (const Divergence& d : report->tensors) QCOMPARE(d.mismatches, uint64_t(0));
        // Not allowed: still refused, naming the link.
        auto refused = openTensorFile(path("self.h5"));
        QVERIFY(!refused.ok());
        QVERIFY2(refused.message().find("external link 'again'") != std::string::npos,
                 refused.message().c_str());
    }

    // Two inputs that link into each other both open, in either order, and compare.
    void linksIntoTheOtherInput()
    {
        for (bool swap : {false, true}) {
            auto a = openTensorFile(path(swap ? "pair_b.h5" : "pair_a.h5"), allowed());
            QVERIFY2(a.ok(), a.ok() ? "" : a.message().c_str());
            auto b = openTensorFile(path(swap ? "pair_a.h5" : "pair_b.h5"), allowed());
            QVERIFY2(b.ok(), b.ok() ? "" : b.message().c_str());
            auto report = compareFiles(**a, **b);
            QVERIFY2(report.ok(), report.ok() ? "" : report.message().c_str());
            QCOMPARE(report->tensors.size(), size_t(2));
            for (const Divergence& d : report->tensors) QCOMPARE(d.mismatches, uint64_t(0));
            const auto y = (*a)->find("y"), x = (*b)->find("x");
            QVERIFY(y && x);
            QCOMPARE(readAll(**a, *y), readAll(**b, *x));
        }
    }
};

QTEST_GUILESS_MAIN(TestHdf5External)
#include "test_hdf5_external.moc"
