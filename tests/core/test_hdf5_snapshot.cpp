// HDF5 snapshots: every dtype convention written by h5py read back bit-exactly, chunked and
// compressed range reads, attributes, refused and odd files, and the SnapshotWriter (round trip,
// streaming, crash safety, and its output checked by h5py).
#include <QElapsedTimer>
#include <QFile>
#include <QTemporaryDir>
#include <QTest>

#include <bit>
#include <cstring>
#include <filesystem>
#include <random>
#include <thread>

#include "core/TensorFile.h"
#include "core/io/FlatRange.h"
#include "core/io/Hdf5File.h"
#include "core/io/SnapshotWriter.h"
#include "support/TestSupport.h"

using namespace faultline;

static_assert(std::endian::native == std::endian::little, "the expected bytes below are little-endian");

namespace {

// The patterns tests/fixtures/write_h5_fixtures.py writes, spelled out independently.
const std::vector<uint32_t> kF32Specials = {
    0x00000000, 0x80000000, 0x00000001, 0x007FFFFF, 0x00800000, 0x7F7FFFFF, 0x7F800000, 0xFF800000,
    0x7F800001, 0x7FC00000, 0x7FC12345, 0xFFC00001, 0x3F800000, 0xBF800000, 0x3EAAAAAB, 0x80000001};
const std::vector<uint64_t> kF64Specials = {0x0000000000000000, 0x8000000000000000, 0x0000000000000001,
                                            0x000FFFFFFFFFFFFF, 0x0010000000000000, 0x7FEFFFFFFFFFFFFF,
                                            0x7FF0000000000000, 0xFFF0000000000000, 0x7FF0000000000001,
                                            0x7FF8000000000000, 0x7FF8DEADBEEF0001, 0x3FF0000000000000};
const std::vector<uint8_t> kBools = {1, 0, 1, 1, 0};
constexpr uint64_t kChunkedElements = 7 * 11 * 13;

template <class T>
QByteArray bytesOf(const std::vector<T>& values)
{
    return QByteArray(reinterpret_cast<const char*>(values.data()), qsizetype(values.size() * sizeof(T)));
}

template <class T>
std::vector<T> iota(size_t n, T start = 0)
{
    std::vector<T> v(n);
    for (size_t i = 0; i < n; ++i) v[i] = T(start + T(i));
    return v;
}

std::vector<uint16_t> all16()
{
    return iota<uint16_t>(65536);
}

std::string str(const QString& s)
{
    return s.toStdString();
}

// Reads a whole tensor in pieces of `chunk` elements; "ERROR: ..." on failure.
QByteArray readInChunks(const TensorFile& file, size_t index, uint64_t chunk)
{
    const TensorInfo& t = file.tensors()[index];
    const unsigned size = dtypeSize(t.dtype);
    QByteArray out(qsizetype(t.byteCount()), '\0');
    for (uint64_t first = 0; first < t.elementCount(); first += chunk) {
        const uint64_t n = std::min(chunk, t.elementCount() - first);
        const Status s = file.read(index, first, n, out.data() + first * size);
        if (!s.ok()) return QByteArray("ERROR: ") + s.message().c_str();
    }
    return out;
}

std::vector<std::string> names(const TensorFile& file)
{
    std::vector<std::string> out;
    for (const TensorInfo& t : file.tensors()) out.push_back(t.name);
    return out;
}

}  // namespace

class TestHdf5Snapshot : public QObject {
    Q_OBJECT

private:
    QTemporaryDir m_dir;
    std::string m_conventions;
    std::unique_ptr<TensorFile> m_file;

    std::string fixture(const char* name) const { return str(m_dir.filePath(QString::fromUtf8(name))); }
    size_t indexOf(const char* name) const
    {
        const auto i = m_file->find(name);
        return i ? *i : SIZE_MAX;
    }

private slots:
    void initTestCase()
    {
        QVERIFY(m_dir.isValid());
        FL_WRITE_FIXTURE(QStringLiteral("write_h5_fixtures.py"), (QStringList{"snapshot", m_dir.path()}));
        FL_WRITE_FIXTURE(QStringLiteral("write_h5_fixtures.py"), (QStringList{"bad", m_dir.path()}));
        m_conventions = fixture("conventions.h5");
        auto opened = openTensorFile(m_conventions);
        QVERIFY2(opened.ok(), opened.ok() ? "" : opened.message().c_str());
        m_file = std::move(*opened);
    }

    void flatRangeBoxesCoverExactlyInOrder()
    {
        const std::vector<std::vector<uint64_t>> shapes = {{5},          {3, 4},    {2, 3, 4},
                                                           {3, 1, 4, 2}, {1, 1, 1}, {2, 5, 1, 3}};
        for (const auto& dims : shapes) {
            const uint64_t total = *checkedElementCount(dims);
            for (uint64_t first = 0; first <= total; ++first)
                for (uint64_t count = 0; first + count <= total; ++count) {
                    const auto boxes = flatRangeBoxes(dims, first, count);
                    QVERIFY(boxes.size() <= 2 * dims.size() - 1);
                    std::vector<uint64_t> covered;
                    for (const HyperslabBox& box : boxes) {
                        // Enumerate the box in row-major order.
                        std::vector<uint64_t> idx(box.start);
                        for (uint64_t c : box.count) QVERIFY(c > 0);
                        while (true) {
                            uint64_t flat = 0;
                            for (size_t k = 0; k < dims.size(); ++k) flat = flat * dims[k] + idx[k];
                            covered.push_back(flat);
                            size_t k = dims.size();
                            while (k > 0) {
                                --k;
                                if (++idx[k] < box.start[k] + box.count[k]) break;
                                idx[k] = box.start[k];
                                if (k == 0) goto boxDone;
                            }
                        }
                    boxDone:;
                    }
                    QCOMPARE(covered, iota<uint64_t>(count, first));
                }
        }
        QCOMPARE(checkedElementCount({uint64_t(1) << 40, uint64_t(1) << 40}), std::nullopt);
        QCOMPARE(checkedElementCount({uint64_t(1) << 40, 0, uint64_t(1) << 40}), std::optional<uint64_t>(0));
        QCOMPARE(checkedElementCount({}), std::optional<uint64_t>(1));
    }

    void signature()
    {
        QVERIFY(isHdf5File(m_conventions));
        QVERIFY(isHdf5File(fixture("userblock.h5")));
        QVERIFY(isHdf5File(fixture("signature_only.h5")));
        QVERIFY(!isHdf5File(fixture("random.h5")));
        QVERIFY(!isHdf5File(fixture("empty.h5")));
        QVERIFY(!isHdf5File(fixture("does_not_exist.h5")));
    }

    void listsTensorsDepthFirstByName()
    {
        const std::vector<std::string> expected = {
            "a/b/c/weight", "bf16/custom",     "bf16/custom_be",    "bf16/opaque",     "bf16/uint16_attr",
            "bool/enum",    "bool/uint8_attr", "chunked/gzip",      "chunked/int64",   "chunked/plain",
            "empty/f32",    "empty/three_d",   "float/f16",         "float/f16_be",    "float/f32",
            "float/f32_be", "float/f64",       "fp8/float8_e4m3fn", "fp8/float8_e5m2", "huge",
            "int/int16",    "int/int32",       "int/int32_be",      "int/int64",       "int/int8",
            "int/uint16",   "int/uint32",      "int/uint64",        "int/uint8",       "scalar/f64",
            "scalar/i32"};
        QCOMPARE(names(*m_file), expected);
        QCOMPARE(m_file->format(), FileFormat::Snapshot);
        QCOMPARE(m_file->path(), m_conventions);
    }

    void dtypesAndStorage_data()
    {
        QTest::addColumn<QString>("name");
        QTest::addColumn<QString>("dtype");
        QTest::addColumn<QString>("shape");
        QTest::addColumn<QString>("storage");
        auto row = [](const char* n, const char* d, const char* s, const char* st) {
            QTest::addRow("%s", n) << QString(n) << QString(d) << QString(s) << QString(st);
        };
        row("bf16/custom", "bfloat16", "[65536]", "hdf5-custom-float");
        row("bf16/custom_be", "bfloat16", "[65536]", "hdf5-custom-float, big-endian");
        row("bf16/uint16_attr", "bfloat16", "[65536]", "uint16+dtype");
        row("bf16/opaque", "bfloat16", "[65536]", "opaque2");
        row("fp8/float8_e4m3fn", "float8_e4m3fn", "[256]", "uint8+dtype");
        row("fp8/float8_e5m2", "float8_e5m2", "[256]", "uint8+dtype");
        row("float/f16", "float16", "[65536]", "float");
        row("float/f16_be", "float16", "[65536]", "float, big-endian");
        row("float/f32", "float32", "[16]", "float");
        row("float/f32_be", "float32", "[16]", "float, big-endian");
        row("float/f64", "float64", "[12]", "float");
        row("int/int8", "int8", "[5]", "int");
        row("int/uint64", "uint64", "[4]", "int");
        row("int/int32_be", "int32", "[5]", "int, big-endian");
        row("bool/enum", "bool", "[5]", "h5py-bool-enum");
        row("bool/uint8_attr", "bool", "[5]", "uint8+dtype");
        row("a/b/c/weight", "float32", "[2, 3]", "float");
        row("chunked/gzip", "float32", "[7, 11, 13]", "float");
        row("scalar/f64", "float64", "[]", "float");
        row("empty/three_d", "int16", "[3, 0, 2]", "int");
        row("huge", "float32", "[1048576, 1048576]", "float");
    }
    void dtypesAndStorage()
    {
        QFETCH(QString, name);
        const auto i = m_file->find(str(name));
        QVERIFY(i);
        const TensorInfo& t = m_file->tensors()[*i];
        QFETCH(QString, dtype);
        QFETCH(QString, shape);
        QFETCH(QString, storage);
        QCOMPARE(QString::fromUtf8(std::string(dtypeName(t.dtype)).c_str()), dtype);
        QCOMPARE(QString::fromStdString(shapeToString(t.shape)), shape);
        QCOMPARE(QString::fromStdString(t.storage), storage);
    }

    void bitExact_data()
    {
        QTest::addColumn<QString>("name");
        QTest::addColumn<QByteArray>("expected");
        const QByteArray u16 = bytesOf(all16());
        for (const char* n : {"bf16/custom", "bf16/custom_be", "bf16/uint16_attr", "bf16/opaque", "float/f16",
                              "float/f16_be"})
            QTest::addRow("%s", n) << QString(n) << u16;
        const QByteArray u8 = bytesOf(iota<uint8_t>(256));
        QTest::addRow("e4m3fn") << QString("fp8/float8_e4m3fn") << u8;
        QTest::addRow("e5m2") << QString("fp8/float8_e5m2") << u8;
        QTest::addRow("f32") << QString("float/f32") << bytesOf(kF32Specials);
        QTest::addRow("f32_be") << QString("float/f32_be") << bytesOf(kF32Specials);
        QTest::addRow("f64") << QString("float/f64") << bytesOf(kF64Specials);
        QTest::addRow("int8") << QString("int/int8") << bytesOf(std::vector<int8_t>{-128, -1, 0, 1, 127});
        QTest::addRow("uint8") << QString("int/uint8") << bytesOf(std::vector<uint8_t>{0, 1, 254, 255});
        QTest::addRow("int16") << QString("int/int16")
                               << bytesOf(std::vector<int16_t>{-32768, -1, 0, 1, 32767});
        QTest::addRow("uint16") << QString("int/uint16")
                                << bytesOf(std::vector<uint16_t>{0, 1, 65534, 65535});
        const std::vector<int32_t> i32 = {INT32_MIN, -1, 0, 1, INT32_MAX};
        QTest::addRow("int32") << QString("int/int32") << bytesOf(i32);
        QTest::addRow("int32_be") << QString("int/int32_be") << bytesOf(i32);
        QTest::addRow("uint32") << QString("int/uint32")
                                << bytesOf(std::vector<uint32_t>{0, 1, UINT32_MAX - 1, UINT32_MAX});
        QTest::addRow("int64") << QString("int/int64")
                               << bytesOf(std::vector<int64_t>{INT64_MIN, -1, 0, 1, INT64_MAX});
        QTest::addRow("uint64") << QString("int/uint64")
                                << bytesOf(std::vector<uint64_t>{0, 1, uint64_t(1) << 63, UINT64_MAX});
        QTest::addRow("bool enum") << QString("bool/enum") << bytesOf(kBools);
        QTest::addRow("bool uint8") << QString("bool/uint8_attr") << bytesOf(kBools);
        QTest::addRow("nested") << QString("a/b/c/weight") << bytesOf(iota<float>(6));
        QTest::addRow("gzip") << QString("chunked/gzip") << bytesOf(iota<float>(kChunkedElements));
        QTest::addRow("plain") << QString("chunked/plain") << bytesOf(iota<float>(kChunkedElements));
        std::vector<int64_t> times3(kChunkedElements);
        for (size_t i = 0; i < times3.size(); ++i) times3[i] = -3 * int64_t(i);
        QTest::addRow("int64 gzip") << QString("chunked/int64") << bytesOf(times3);
        QTest::addRow("scalar f64") << QString("scalar/f64") << bytesOf(std::vector<double>{3.5});
        QTest::addRow("scalar i32") << QString("scalar/i32") << bytesOf(std::vector<int32_t>{-7});
        QTest::addRow("empty") << QString("empty/f32") << QByteArray();
        QTest::addRow("empty 3d") << QString("empty/three_d") << QByteArray();
    }
    void bitExact()
    {
        QFETCH(QString, name);
        QFETCH(QByteArray, expected);
        const auto i = m_file->find(str(name));
        QVERIFY(i);
        QCOMPARE(readInChunks(*m_file, *i, UINT64_MAX / 2), expected);  // whole
        QCOMPARE(readInChunks(*m_file, *i, 777), expected);
        const bool small = m_file->tensors()[*i].elementCount() <= 4096;
        QCOMPARE(readInChunks(*m_file, *i, small ? 3 : 31), expected);
    }

    void chunkedCompressedRangesMatchWhole()
    {
        for (const char* name : {"chunked/gzip", "chunked/int64", "chunked/int64"}) {
            const size_t index = indexOf(name);
            QVERIFY(index != SIZE_MAX);
            const QByteArray whole = readInChunks(*m_file, index, kChunkedElements);
            QCOMPARE(whole.size(), qsizetype(kChunkedElements * dtypeSize(m_file->tensors()[index].dtype)));
            for (uint64_t chunk : {1, 2, 5, 7, 12, 13, 100, 143, 144, 1000, 1001})
                QCOMPARE(readInChunks(*m_file, index, chunk), whole);
            std::mt19937_64 rng(7);
            const unsigned size = dtypeSize(m_file->tensors()[index].dtype);
            for (int trial = 0; trial < 200; ++trial) {
                const uint64_t first = rng() % kChunkedElements;
                const uint64_t count = rng() % (kChunkedElements - first + 1);
                QByteArray part(qsizetype(count * size), '\0');
                QVERIFY(m_file->read(index, first, count, part.data()).ok());
                QCOMPARE(part, whole.mid(qsizetype(first * size), qsizetype(count * size)));
            }
        }
    }

    void attributes()
    {
        const auto& a = m_file->attributes();
        QCOMPARE(a.at("device"), std::string("gpu3"));
        QCOMPARE(a.at("role"), std::string("suspect"));
        QCOMPARE(a.at("step"), std::string("1200"));
        QCOMPARE(a.at("rank"), std::string("3"));
        QCOMPARE(a.at("lr"), std::string("0.5"));
        QCOMPARE(a.at("note"), std::string("fixed length"));
        QCOMPARE(a.at("dims"), std::string("[2, 3, 4]"));

        const TensorInfo& w = m_file->tensors()[indexOf("a/b/c/weight")];
        QCOMPARE(w.kind, std::string("weight"));
        const std::map<std::string, std::string> expected = {
            {"comment", "hello"}, {"flag", "1"}, {"layer", "5"}, {"scales", "[0.25, 0.5]"}};
        QCOMPARE(w.attributes, expected);
        // The dtype attribute is consumed by the convention it states.
        QVERIFY(m_file->tensors()[indexOf("bf16/uint16_attr")].attributes.empty());
        QVERIFY(m_file->tensors()[indexOf("fp8/float8_e5m2")].attributes.empty());
    }

    // A file built in memory and written in one go reads back like one written to disk.
    void inMemoryWriterRoundTrips()
    {
        const std::string path = m_dir.filePath("memory.h5").toStdString();
        auto w = SnapshotWriter::create(path, {.inMemory = true});
        QVERIFY2(w.ok(), w.ok() ? "" : w.message().c_str());
        std::vector<float> values(1000);
        for (size_t i = 0; i < values.size(); ++i) values[i] = float(i) * 0.5f;
        QVERIFY(w->setRootAttribute("faultline_format", std::string("campaign")).ok());
        QVERIFY(w->setGroupAttribute("targets/0", "verdict", std::string("healthy")).ok());
        QVERIFY(w->writeTensor("x", DType::Float32, {10, 100}, values.data()).ok());
        QVERIFY(!QFile::exists(QString::fromStdString(path)));  // nothing on disk before close()
        Status closed = w->close();
        QVERIFY2(closed.ok(), closed.ok() ? "" : closed.message().c_str());
        QVERIFY(faultline::test::tempFilesBeside(QString::fromStdString(path)).isEmpty());
        auto file = openTensorFile(path);
        QVERIFY2(file.ok(), file.ok() ? "" : file.message().c_str());
        QCOMPARE((*file)->attributes().at("faultline_format"), std::string("campaign"));
        QCOMPARE((*file)->tensors().size(), size_t(1));
        std::vector<float> back(values.size());
        QVERIFY((*file)->read(0, 0, back.size(), back.data()).ok());
        QCOMPARE(back, values);
    }

    void nonTensorsAreOneWarningPerReason()
    {
        const auto& w = m_file->warnings();
        auto count = [&](const char* needle) {
            return std::count_if(w.begin(), w.end(),
                                 [&](const std::string& s) { return s.find(needle) != std::string::npos; });
        };
        QCOMPARE(count("skipped 2 datasets that are not tensors: compound type"), 1);
        QCOMPARE(count("compound"), 1);
        QCOMPARE(count("skipped 1 dataset that is not a tensor: strings"), 1);
        QCOMPARE(count("references"), 1);
        QCOMPARE(count("null"), 1);
        QCOMPARE(count("soft links are not followed"), 1);
        QCOMPARE(count("('soft_to_weight')"), 1);
        for (const std::string& line : w) {
            QVERIFY2(line.rfind(m_conventions + ": ", 0) == 0, line.c_str());
            QVERIFY(line.find('\n') == std::string::npos);
        }
        // Not tensors, yet listed for comparison: each with fields to compare or the reason why not.
        size_t compounds = 0;
        for (const RecordInfo& r : m_file->records()) {
            QVERIFY2(!r.fields.empty() || !r.notComparable.empty(), r.name.c_str());
            compounds += r.type.rfind("compound {", 0) == 0;
        }
        QCOMPARE(compounds, size_t(2));
        QVERIFY(m_file->records().size() >= 5);
    }

    void hugeDatasetIsMetadataAndReadsStayBounded()
    {
        const size_t index = indexOf("huge");
        QVERIFY(index != SIZE_MAX);
        const TensorInfo& t = m_file->tensors()[index];
        QCOMPARE(t.elementCount(), uint64_t(1) << 40);
        QElapsedTimer timer;
        timer.start();
        for (uint64_t first : {uint64_t(0), (uint64_t(1) << 39) + 12345, (uint64_t(1) << 40) - 16}) {
            std::vector<float> v(16, 0.0f);
            const Status s = m_file->read(index, first, 16, v.data());
            QVERIFY2(s.ok(), s.message().c_str());
            QCOMPARE(v, std::vector<float>(16, 1.5f));  // the fill value: nothing was written
        }
        QVERIFY2(timer.elapsed() < 5000, "reading 48 elements of a 2^40-element dataset must be cheap");
    }

    void readErrorsNameFileAndTensor()
    {
        const size_t index = indexOf("float/f32");
        float dst[2];
        Status s = m_file->read(index, 15, 2, dst);
        QVERIFY(!s.ok());
        QVERIFY(s.message().find(m_conventions) == 0);
        QVERIFY(s.message().find("float/f32") != std::string::npos);
        s = m_file->read(m_file->tensors().size(), 0, 1, dst);
        QVERIFY(!s.ok());
        QVERIFY(s.message().find(m_conventions) == 0);
        QVERIFY(m_file->read(index, 16, 0, dst).ok());  // an empty range at the end is fine
    }

    void userBlock()
    {
        auto f = openTensorFile(fixture("userblock.h5"));
        QVERIFY2(f.ok(), f.ok() ? "" : f.message().c_str());
        QCOMPARE(readInChunks(**f, 0, 3), bytesOf(iota<int32_t>(4)));
        QVERIFY((*f)->mappedData(0) == nullptr);  // addresses are not file offsets there
    }

    // In-place access (what the compare engine scans without copying): offered exactly where the
    // stored bytes are what read() hands out, and then byte-identical to read(), also after the
    // pages were released and fault back in.
    void mappedDataIsWhatReadGives()
    {
        const TensorFile& f = *m_file;
        size_t mapped = 0;
        for (size_t i = 0; i < f.tensors().size(); ++i) {
            const TensorInfo& t = f.tensors()[i];
            const auto* p = static_cast<const unsigned char*>(f.mappedData(i));
            if (p == nullptr) continue;
            ++mapped;
            const size_t bytes = size_t(t.elementCount() * dtypeSize(t.dtype));
            std::vector<unsigned char> viaRead(bytes);
            QVERIFY(f.read(i, 0, t.elementCount(), viaRead.data()).ok());
            QVERIFY2(std::memcmp(p, viaRead.data(), bytes) == 0, t.name.c_str());
            f.releaseMapped(i, 0, t.elementCount());
            QVERIFY2(std::memcmp(p, viaRead.data(), bytes) == 0, t.name.c_str());
        }
        auto isMapped = [&](const char* name) {
            const auto i = f.find(name);
            return i && f.mappedData(*i) != nullptr;
        };
        for (const char* name : {"float/f32", "float/f16", "bf16/custom", "bf16/uint16_attr", "bf16/opaque",
                                 "fp8/float8_e4m3fn", "chunked/plain"})
            QVERIFY2(isMapped(name), name);
        // Byte-swapped on read, compressed or chunked, scalars, never-written: read() only.
        for (const char* name : {"float/f16_be", "float/f32_be", "bf16/custom_be", "chunked/gzip",
                                 "chunked/int64", "scalar/f64", "empty/f32", "huge"})
            QVERIFY2(!isMapped(name), name);
        QVERIFY(mapped >= 6);
    }

    void badFiles_data()
    {
        QTest::addColumn<QString>("file");
        QTest::addColumn<QString>("problem");
        QTest::addRow("random bytes") << "random.h5"
                                      << "not a tensor file";
        QTest::addRow("signature then garbage") << "signature_only.h5"
                                                << "cannot open as HDF5";
        QTest::addRow("truncated") << "truncated.h5"
                                   << "truncated";
        QTest::addRow("empty") << "empty.h5"
                               << "empty file";
        QTest::addRow("missing") << "missing.h5"
                                 << "no such file";
        QTest::addRow("external link") << "external_link.h5"
                                       << "external link 'ext' points into another file ('other.h5'";
        QTest::addRow("external storage") << "external_storage.h5"
                                          << "dataset 'outside' keeps its data in 1 external file";
        QTest::addRow("virtual dataset") << "virtual.h5"
                                         << "dataset 'virtual' is a virtual dataset";
        QTest::addRow("element overflow") << "overflow.h5"
                                          << "dataset 'too_many': shape [1099511627776, 1099511627776] has "
                                             "more elements than fit in 64 bits";
        QTest::addRow("byte overflow")
            << "overflow_bytes.h5"
            << "dataset 'too_many_bytes': shape [2147483648, 2147483648] has more bytes than fit in 64 bits";
    }
    void badFiles()
    {
        QFETCH(QString, file);
        QFETCH(QString, problem);
        const std::string path = fixture(qPrintable(file));
        auto opened = openTensorFile(path);
        QVERIFY(!opened.ok());
        const std::string& message = opened.message();
        QVERIFY2(message.rfind(path + ": ", 0) == 0, message.c_str());
        QVERIFY2(message.find(str(problem)) != std::string::npos, message.c_str());
        QVERIFY2(message.find('\n') == std::string::npos, message.c_str());
        // The HDF5 entry point itself refuses too, naming the file.
        auto direct = openHdf5TensorFile(path);
        QVERIFY(!direct.ok());
        QVERIFY2(direct.message().rfind(path + ": ", 0) == 0, direct.message().c_str());
    }

    void externalDataWhenAllowed()
    {
        OpenOptions allow;
        allow.allowExternal = true;
        auto link = openTensorFile(fixture("external_link.h5"), allow);
        QVERIFY2(link.ok(), link.ok() ? "" : link.message().c_str());
        QCOMPARE(names(**link), (std::vector<std::string>{"ext", "local"}));
        QCOMPARE(readInChunks(**link, 0, 2), bytesOf(iota<int32_t>(5)));

        auto storage = openTensorFile(fixture("external_storage.h5"), allow);
        QVERIFY2(storage.ok(), storage.ok() ? "" : storage.message().c_str());
        QCOMPARE(readInChunks(**storage, 0, 4), bytesOf(iota<float>(10)));

        auto vds = openTensorFile(fixture("virtual.h5"), allow);
        QVERIFY2(vds.ok(), vds.ok() ? "" : vds.message().c_str());
        std::vector<int32_t> tens(8);
        for (size_t i = 0; i < 8; ++i) tens[i] = int32_t(10 * i);
        QCOMPARE(readInChunks(**vds, 0, 3), bytesOf(tens));
    }

    // A link that leads nowhere does not refuse the file: it is listed among the datasets that
    // cannot be read, with why, and warned about (compare reports it; h5diff --follow-symlinks
    // compares such links too).
    void danglingLinksAreListed()
    {
        auto f = openTensorFile(fixture("dangling_soft.h5"));
        QVERIFY2(f.ok(), f.ok() ? "" : f.message().c_str());
        QCOMPARE(names(**f), (std::vector<std::string>{"local"}));
        QCOMPARE((*f)->records().size(), size_t(1));
        const RecordInfo& link = (*f)->records()[0];
        QCOMPARE(link.name, std::string("g/dangling"));
        QVERIFY2(
            link.notComparable.find("dangling soft link: '/nowhere' does not exist") != std::string::npos,
            link.notComparable.c_str());
        QVERIFY(link.fields.empty());
        bool warned = false;
        for (const std::string& w : (*f)->warnings())
            warned = warned || w.find("g/dangling") != std::string::npos;
        QVERIFY(warned);

        OpenOptions allow;
        allow.allowExternal = true;
        auto external = openTensorFile(fixture("external_missing.h5"), allow);
        QVERIFY2(external.ok(), external.ok() ? "" : external.message().c_str());
        QCOMPARE(names(**external), (std::vector<std::string>{"local"}));
        QCOMPARE((*external)->records().size(), size_t(1));
        QVERIFY2((*external)->records()[0].notComparable.rfind("dangling external link", 0) == 0,
                 (*external)->records()[0].notComparable.c_str());
        QCOMPARE((*external)->records()[0].type, std::string("external link to 'missing.h5:/data'"));
        auto refused = openTensorFile(fixture("external_missing.h5"));
        QVERIFY(!refused.ok());
    }

    void hardLinkCyclesTerminate()
    {
        auto f = openTensorFile(fixture("cycle.h5"));
        QVERIFY2(f.ok(), f.ok() ? "" : f.message().c_str());
        QCOMPARE(names(**f), std::vector<std::string>{"g/x"});
        QVERIFY(!(*f)->warnings().empty());
        QVERIFY((*f)->warnings().front().find("several names") != std::string::npos);
    }

    void concurrentReads()
    {
        const size_t index = indexOf("bf16/custom_be");
        const QByteArray expected = bytesOf(all16());
        std::atomic<int> failures{0};
        std::vector<std::thread> threads;
        for (uint64_t chunk : {1000, 4093, 65536, 333})
            threads.emplace_back([&, chunk] {
                for (int i = 0; i < 5; ++i)
                    if (readInChunks(*m_file, index, chunk) != expected) ++failures;
            });
        for (auto& t : threads) t.join();
        QCOMPARE(failures.load(), 0);
    }

    // ---- writer ---------------------------------------------------------------------------

    void writerRoundTripEveryDType()
    {
        const std::string path = fixture("written_all.h5");
        auto writer = SnapshotWriter::create(path);
        QVERIFY2(writer.ok(), writer.ok() ? "" : writer.message().c_str());
        QVERIFY(writer->setRootAttribute("device", std::string("gpu1")).ok());
        std::map<std::string, QByteArray> written;
        for (DType t : kAllDTypes) {
            // 3 x 5 elements of distinct byte patterns (bools: 0/1).
            const unsigned size = dtypeSize(t);
            QByteArray data(qsizetype(15 * size), '\0');
            for (qsizetype i = 0; i < data.size(); ++i)
                data[i] = t == DType::Bool ? char((i * 7) % 3 == 0) : char(i * 37 + 11);
            const std::string name = "all/" + std::string(dtypeName(t));
            TensorWriteOptions options;
            options.kind = "grad";
            options.attributes["layer"] = int64_t(4);
            const Status s = writer->writeTensor(name, t, {3, 5}, data.constData(), options);
            QVERIFY2(s.ok(), s.message().c_str());
            written[name] = data;
        }
        QVERIFY(writer->close().ok());

        auto f = openTensorFile(path);
        QVERIFY2(f.ok(), f.ok() ? "" : f.message().c_str());
        QCOMPARE((*f)->tensors().size(), written.size());
        QCOMPARE((*f)->attributes().at("device"), std::string("gpu1"));
        for (const auto& [name, data] : written) {
            const auto i = (*f)->find(name);
            QVERIFY(i);
            const TensorInfo& t = (*f)->tensors()[*i];
            QCOMPARE(std::string(dtypeName(t.dtype)), name.substr(4));
            QCOMPARE(t.shape, (std::vector<uint64_t>{3, 5}));
            QCOMPARE(t.kind, std::string("grad"));
            QCOMPARE(t.attributes, (std::map<std::string, std::string>{{"layer", "4"}}));
            QCOMPARE(readInChunks(**f, *i, 4), data);
        }
        QVERIFY((*f)->warnings().empty());
    }

    void writerStreamsChunkedCompressed()
    {
        const std::string path = fixture("streamed.h5");
        auto writer = SnapshotWriter::create(path);
        QVERIFY(writer.ok());
        const std::vector<float> values = iota<float>(kChunkedElements);
        TensorWriteOptions options;
        options.gzipLevel = 6;
        options.chunkShape = {2, 3, 4};
        QVERIFY(writer->beginTensor("deep/stream", DType::Float32, {7, 11, 13}, options).ok());
        for (uint64_t first = 0; first < kChunkedElements; first += 97)
            QVERIFY(
                writer
                    ->appendElements(values.data() + first, std::min<uint64_t>(97, kChunkedElements - first))
                    .ok());
        QVERIFY(writer->endTensor().ok());
        // Out of order, with gaps that read back as zero.
        QVERIFY(writer->beginTensor("sparse", DType::Int32, {4, 4}).ok());
        const int32_t a[3] = {7, 8, 9};
        QVERIFY(writer->writeElements(13, 3, a).ok());
        QVERIFY(writer->writeElements(2, 1, a).ok());
        const Status outside = writer->writeElements(15, 2, a);
        QVERIFY(!outside.ok());
        QVERIFY(outside.message().rfind(path + ": ", 0) == 0);
        QVERIFY(writer->close().ok());  // closes the open tensor too

        auto f = openTensorFile(path);
        QVERIFY(f.ok());
        QCOMPARE(names(**f), (std::vector<std::string>{"deep/stream", "sparse"}));
        QCOMPARE(readInChunks(**f, 0, 1000), bytesOf(values));
        std::vector<int32_t> sparse(16, 0);
        sparse[2] = 7;
        sparse[13] = 7;
        sparse[14] = 8;
        sparse[15] = 9;
        QCOMPARE(readInChunks(**f, 1, 5), bytesOf(sparse));
    }

    void writerNeverLeavesAHalfFile()
    {
        namespace fs = std::filesystem;
        const std::string path = fixture("crashsafe.h5");
        {
            auto writer = SnapshotWriter::create(path);
            QVERIFY(writer.ok());
            QVERIFY(writer->writeTensor("x", DType::UInt8, {2}, "ab").ok());
            QVERIFY(!fs::exists(path));
            QCOMPARE(faultline::test::tempFilesBeside(QString::fromStdString(path)).size(), 1);
        }  // abandoned: no close()
        QVERIFY(!fs::exists(path));
        QVERIFY(faultline::test::tempFilesBeside(QString::fromStdString(path)).isEmpty());

        auto writer = SnapshotWriter::create(path);
        QVERIFY(writer.ok());
        QVERIFY(writer->writeTensor("x", DType::UInt8, {2}, "ab").ok());
        QVERIFY(writer->close().ok());
        QVERIFY(fs::exists(path));
        QVERIFY(faultline::test::tempFilesBeside(QString::fromStdString(path)).isEmpty());
        QVERIFY(!writer->writeTensor("y", DType::UInt8, {1}, "c").ok());  // closed

        // Abandoning a second writer leaves the finished file as it was.
        {
            auto again = SnapshotWriter::create(path);
            QVERIFY(again.ok());
            QVERIFY(again->writeTensor("other", DType::UInt8, {1}, "z").ok());
        }
        auto f = openTensorFile(path);
        QVERIFY(f.ok());
        QCOMPARE(names(**f), std::vector<std::string>{"x"});
    }

    void writerErrorsNameTheFile_data()
    {
        QTest::addColumn<int>("which");
        QTest::addRow("bad name") << 0;
        QTest::addRow("chunk shape rank") << 1;
        QTest::addRow("chunk larger than shape") << 2;
        QTest::addRow("duplicate tensor") << 3;
        QTest::addRow("reserved attribute") << 4;
        QTest::addRow("element overflow") << 5;
        QTest::addRow("gzip level") << 6;
    }
    void writerErrorsNameTheFile()
    {
        QFETCH(int, which);
        const std::string path = fixture("errors.h5");
        auto writer = SnapshotWriter::create(path);
        QVERIFY(writer.ok());
        const float data[4] = {1, 2, 3, 4};
        TensorWriteOptions options;
        Status s;
        switch (which) {
            case 0:
                s = writer->writeTensor("a/../b", DType::Float32, {4}, data);
                break;
            case 1:
                options.chunkShape = {2, 2};
                s = writer->writeTensor("x", DType::Float32, {4}, data, options);
                break;
            case 2:
                options.chunkShape = {8};
                s = writer->writeTensor("x", DType::Float32, {4}, data, options);
                break;
            case 3:
                QVERIFY(writer->writeTensor("x", DType::Float32, {4}, data).ok());
                s = writer->writeTensor("x", DType::Float32, {4}, data);
                break;
            case 4:
                options.attributes["dtype"] = std::string("float16");
                s = writer->writeTensor("x", DType::Float32, {4}, data, options);
                break;
            case 5:
                s = writer->beginTensor("x", DType::Float32, {uint64_t(1) << 40, uint64_t(1) << 40});
                break;
            case 6:
                options.gzipLevel = 12;
                s = writer->writeTensor("x", DType::Float32, {4}, data, options);
                break;
        }
        QVERIFY(!s.ok());
        QVERIFY2(s.message().rfind(path + ": ", 0) == 0, s.message().c_str());
        QVERIFY2(s.message().find('\n') == std::string::npos, s.message().c_str());
    }

    void writerOutputReadByH5py()
    {
        const std::string path = fixture("for_h5py.h5");
        auto w = SnapshotWriter::create(path);
        QVERIFY(w.ok());
        QVERIFY(w->setRootAttribute("device", std::string("gpu1")).ok());
        QVERIFY(w->setRootAttribute("step", int64_t(42)).ok());
        const std::vector<uint16_t> u16 = all16();
        QVERIFY(w->writeTensor("bf16", DType::BFloat16, {65536}, u16.data()).ok());
        QVERIFY(w->writeTensor("f16", DType::Float16, {256, 256}, u16.data()).ok());
        QVERIFY(w->writeTensor("f32", DType::Float32, {kF32Specials.size()}, kF32Specials.data()).ok());
        QVERIFY(w->writeTensor("f64", DType::Float64, {kF64Specials.size()}, kF64Specials.data()).ok());
        const std::vector<uint8_t> u8 = iota<uint8_t>(256);
        QVERIFY(w->writeTensor("fp8/float8_e4m3fn", DType::Float8E4M3FN, {256}, u8.data()).ok());
        QVERIFY(w->writeTensor("fp8/float8_e5m2", DType::Float8E5M2, {256}, u8.data()).ok());
        const std::vector<int8_t> i8 = {-128, -1, 0, 1, 127};
        const std::vector<uint8_t> ui8 = {0, 1, 254, 255};
        const std::vector<int16_t> i16 = {-32768, -1, 0, 1, 32767};
        const std::vector<uint16_t> ui16 = {0, 1, 65534, 65535};
        const std::vector<int32_t> i32 = {INT32_MIN, -1, 0, 1, INT32_MAX};
        const std::vector<uint32_t> ui32 = {0, 1, UINT32_MAX - 1, UINT32_MAX};
        const std::vector<int64_t> i64 = {INT64_MIN, -1, 0, 1, INT64_MAX};
        const std::vector<uint64_t> ui64 = {0, 1, uint64_t(1) << 63, UINT64_MAX};
        QVERIFY(w->writeTensor("int/int8", DType::Int8, {5}, i8.data()).ok());
        QVERIFY(w->writeTensor("int/uint8", DType::UInt8, {4}, ui8.data()).ok());
        QVERIFY(w->writeTensor("int/int16", DType::Int16, {5}, i16.data()).ok());
        QVERIFY(w->writeTensor("int/uint16", DType::UInt16, {4}, ui16.data()).ok());
        QVERIFY(w->writeTensor("int/int32", DType::Int32, {5}, i32.data()).ok());
        QVERIFY(w->writeTensor("int/uint32", DType::UInt32, {4}, ui32.data()).ok());
        QVERIFY(w->writeTensor("int/int64", DType::Int64, {5}, i64.data()).ok());
        QVERIFY(w->writeTensor("int/uint64", DType::UInt64, {4}, ui64.data()).ok());
        QVERIFY(w->writeTensor("bool", DType::Bool, {5}, kBools.data()).ok());
        TensorWriteOptions weight;
        weight.kind = "weight";
        const std::vector<float> six = iota<float>(6);
        QVERIFY(w->writeTensor("layers/0/weight", DType::Float32, {2, 3}, six.data(), weight).ok());
        TensorWriteOptions gz;
        gz.gzipLevel = 4;
        QVERIFY(w->beginTensor("streamed", DType::Float32, {7, 11, 13}, gz).ok());
        const std::vector<float> values = iota<float>(kChunkedElements);
        for (uint64_t first = 0; first < kChunkedElements; first += 50)
            QVERIFY(w->appendElements(values.data() + first, std::min<uint64_t>(50, kChunkedElements - first))
                        .ok());
        QVERIFY(w->endTensor().ok());
        const double scalar = 3.5;
        QVERIFY(w->writeTensor("scalar", DType::Float64, {}, &scalar).ok());
        QVERIFY(w->writeTensor("empty", DType::Int16, {3, 0, 2}, nullptr).ok());
        QVERIFY(w->close().ok());
        FL_WRITE_FIXTURE(QStringLiteral("write_h5_fixtures.py"),
                         (QStringList{"verify-snapshot", QString::fromStdString(path)}));

        // And our own reader agrees.
        auto f = openTensorFile(path);
        QVERIFY(f.ok());
        QCOMPARE(readInChunks(**f, *(*f)->find("bf16"), 999), bytesOf(u16));
        QCOMPARE((*f)->tensors()[*(*f)->find("bf16")].storage, std::string("hdf5-custom-float"));
        QCOMPARE(readInChunks(**f, *(*f)->find("f16"), 999), bytesOf(u16));
        QCOMPARE((*f)->tensors()[*(*f)->find("bool")].storage, std::string("h5py-bool-enum"));
        QCOMPARE(readInChunks(**f, *(*f)->find("bool"), 2), bytesOf(kBools));
    }
};

QTEST_GUILESS_MAIN(TestHdf5Snapshot)
#include "test_hdf5_snapshot.moc"
