// safetensors: reading files written by an independent Python writer (good and malformed),
// the reference reader's checks, chunked and concurrent reads, and the C++ writer.
#include <QDir>
#include <QFile>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QTemporaryDir>
#include <QTest>

#include <atomic>
#include <bit>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <limits>
#include <thread>

#include "core/TensorFile.h"
#include "core/io/SafetensorsFile.h"
#include "core/io/SafetensorsWriter.h"
#include "support/TestSupport.h"

using namespace faultline;

namespace {

QByteArray fileBytes(const QString& path)
{
    QFile f(path);
    if (!f.open(QIODevice::ReadOnly)) return {};
    return f.readAll();
}

std::string str(const QString& s)
{
    return s.toStdString();
}

// Whole tensor through read(); QFAILs are not possible here, so an error yields "ERROR: ...".
QByteArray readWhole(const TensorFile& file, size_t index)
{
    const TensorInfo& t = file.tensors()[index];
    QByteArray out(qsizetype(t.byteCount()), '\0');
    const Status s = file.read(index, 0, t.elementCount(), out.data());
    if (!s.ok()) return QByteArray("ERROR: ") + s.message().c_str();
    return out;
}

template <class T>
void append(QByteArray& out, T v)
{
    char b[sizeof(T)];
    std::memcpy(b, &v, sizeof(T));  // the host is little-endian (the reader asserts it)
    out.append(b, qsizetype(sizeof(T)));
}

// float16 bits of a value that half represents exactly as a normal number or zero.
uint16_t halfBitsExact(double v)
{
    if (v == 0) return std::signbit(v) ? 0x8000 : 0;
    const uint16_t sign = v < 0 ? 0x8000 : 0;
    int e = 0;
    const double m = std::frexp(std::fabs(v), &e);  // v = m * 2^e, m in [0.5, 1)
    const auto mantissa = uint16_t(std::lround((m * 2 - 1) * 1024));
    return uint16_t(sign | uint16_t((e - 1 + 15) << 10) | mantissa);
}

// The formula documented in tests/fixtures/write_safetensors.py, recomputed here.
QByteArray formulaBytes(DType t, uint64_t n)
{
    QByteArray out;
    for (uint64_t u = 0; u < n; ++u) {
        const auto i = int64_t(u);
        const double f = double(i - 7) * 0.25;
        switch (t) {
            case DType::Float64:
                append(out, f);
                break;
            case DType::Float32:
                append(out, float(f));
                break;
            case DType::Float16:
                append(out, halfBitsExact(f));
                break;
            case DType::BFloat16:
                append(out, uint16_t(std::bit_cast<uint32_t>(float(f)) >> 16));
                break;
            case DType::Float8E4M3FN:
                append(out, uint8_t((i * 37 + 11) & 0xff));
                break;
            case DType::Float8E5M2:
                append(out, uint8_t((i * 53 + 5) & 0xff));
                break;
            case DType::Bool:
                append(out, uint8_t(i % 3 == 0 ? 1 : 0));
                break;
            case DType::UInt8:
                append(out, uint8_t((i * 37 + 11) % 256));
                break;
            case DType::Int8:
                append(out, int8_t((i * 37) % 256 - 128));
                break;
            case DType::UInt16:
                append(out, uint16_t((i * 2731) % 65536));
                break;
            case DType::Int16:
                append(out, int16_t(i * 1000 - 30000));
                break;
            case DType::UInt32:
                append(out, uint32_t((u * 2654435761ull) % (1ull << 32)));
                break;
            case DType::Int32:
                append(out, int32_t((i - 7) * 123456789));
                break;
            case DType::UInt64:
                append(out, uint64_t(u * 0x9E3779B97F4A7C15ull));
                break;
            case DType::Int64:
                append(out, int64_t((i - 7) * 1000000000000000ll + i));
                break;
        }
    }
    return out;
}

}  // namespace

class TestSafetensors : public QObject {
    Q_OBJECT

private:
    QTemporaryDir m_dir;
    QString m_good;
    QString m_bad;
    QJsonObject m_manifest;

    QString good(const QString& name) const { return m_good + "/" + name + ".safetensors"; }
    QString bad(const QString& name) const { return m_bad + "/" + name + ".safetensors"; }
    QString scratch(const QString& name) const { return m_dir.filePath(name); }

private slots:
    void initTestCase()
    {
        QVERIFY(m_dir.isValid());
        FL_WRITE_FIXTURE(QStringLiteral("write_safetensors.py"), QStringList{m_dir.path()});
        m_good = m_dir.filePath("good");
        m_bad = m_dir.filePath("bad");
        const QJsonDocument doc = QJsonDocument::fromJson(fileBytes(m_good + "/manifest.json"));
        QVERIFY(doc.isObject());
        m_manifest = doc.object();
        QCOMPARE(m_manifest.size(), 5);
    }

    void dtypeNames()
    {
        for (DType t : kAllDTypes) {
            const auto name = safetensorsDTypeName(t);
            QVERIFY(name != "UNKNOWN");
            QCOMPARE(dtypeFromSafetensorsName(name), std::optional<DType>(t));
        }
        QCOMPARE(dtypeFromSafetensorsName("F8_E4M3"), std::optional<DType>(DType::Float8E4M3FN));
        QCOMPARE(dtypeFromSafetensorsName("BF16"), std::optional<DType>(DType::BFloat16));
        QCOMPARE(dtypeFromSafetensorsName("BOOL"), std::optional<DType>(DType::Bool));
        QVERIFY(!dtypeFromSafetensorsName("bf16"));
        QVERIFY(!dtypeFromSafetensorsName("F8_E4M3FN"));
        QVERIFY(!dtypeFromSafetensorsName("F8_E8M0"));
        QVERIFY(!dtypeFromSafetensorsName("C64"));
        QVERIFY(!dtypeFromSafetensorsName(""));
    }

    // Every good file: names in offset order, dtype, shape, storage, metadata, warnings and the
    // bytes numpy wrote, through openSafetensors, openTensorFile and the in-memory parser.
    void goodFiles_data()
    {
        QTest::addColumn<QString>("name");
        for (const QString& key : m_manifest.keys()) QTest::newRow(qPrintable(key)) << key;
    }
    void goodFiles()
    {
        QFETCH(QString, name);
        const QJsonObject expect = m_manifest.value(name).toObject();
        const QJsonArray tensors = expect.value("tensors").toArray();
        const std::string path = str(good(name));

        auto opened = openSafetensors(path);
        QVERIFY2(opened.ok(), opened.ok() ? "" : opened.message().c_str());
        auto viaDispatch = openTensorFile(path);
        QVERIFY2(viaDispatch.ok(), viaDispatch.ok() ? "" : viaDispatch.message().c_str());
        const QByteArray all = fileBytes(good(name));
        auto inMemory = parseSafetensorsBytes(path, all.constData(), size_t(all.size()));
        QVERIFY2(inMemory.ok(), inMemory.ok() ? "" : inMemory.message().c_str());

        for (const TensorFile* file : {opened->get(), viaDispatch->get()}) {
            QCOMPARE(file->path(), path);
            QCOMPARE(file->format(), FileFormat::Safetensors);
            QCOMPARE(qsizetype(file->tensors().size()), tensors.size());
            QCOMPARE(qsizetype(file->warnings().size()), expect.value("warnings").toInt());
            const QJsonObject metadata = expect.value("metadata").toObject();
            QCOMPARE(qsizetype(file->attributes().size()), metadata.size());
            for (const QString& k : metadata.keys()) {
                const auto it = file->attributes().find(str(k));
                QVERIFY2(it != file->attributes().end(), qPrintable(k));
                QCOMPARE(QString::fromStdString(it->second), metadata.value(k).toString());
            }
            for (qsizetype i = 0; i < tensors.size(); ++i) {
                const QJsonArray t = tensors[i].toArray();
                const TensorInfo& info = file->tensors()[size_t(i)];
                QCOMPARE(QString::fromStdString(info.name), t[0].toString());
                QCOMPARE(info.dtype, *dtypeFromSafetensorsName(str(t[1].toString())));
                std::vector<uint64_t> shape;
                for (const auto d : t[2].toArray()) shape.push_back(uint64_t(d.toInteger()));
                QCOMPARE(info.shape, shape);
                QCOMPARE(QString::fromStdString(info.storage), QStringLiteral("safetensors"));
                QCOMPARE(file->find(info.name), std::optional<size_t>(size_t(i)));
                const QByteArray expected = fileBytes(m_good + "/" + name + "." + t[0].toString() + ".bin");
                QCOMPARE(qsizetype(info.byteCount()), expected.size());
                QCOMPARE(readWhole(*file, size_t(i)), expected);
            }
        }
        QCOMPARE(inMemory->tensors.size(), opened.value()->tensors().size());
        QCOMPARE(inMemory->metadata, opened.value()->attributes());
        for (size_t i = 0; i < inMemory->tensors.size(); ++i) {
            QCOMPARE(inMemory->tensors[i].name, opened.value()->tensors()[i].name);
            const QByteArray fromMemory = all.mid(qsizetype(inMemory->dataStart() + inMemory->dataBegin[i]),
                                                  qsizetype(inMemory->tensors[i].byteCount()));
            QCOMPARE(fromMemory, readWhole(**opened, i));
        }
    }

    // Values recomputed in C++ from the documented formula, not from what Python wrote.
    void formulaValues()
    {
        auto file = openSafetensors(str(good("all_dtypes")));
        QVERIFY2(file.ok(), file.ok() ? "" : file.message().c_str());
        for (DType t : kAllDTypes) {
            std::string name = "t_" + std::string(safetensorsDTypeName(t));
            for (char& c : name) c = char(std::tolower(static_cast<unsigned char>(c)));
            const auto index = (*file)->find(name);
            QVERIFY2(index, name.c_str());
            const TensorInfo& info = (*file)->tensors()[*index];
            QCOMPARE(info.dtype, t);
            QVERIFY2(readWhole(**file, *index) == formulaBytes(t, info.elementCount()), name.c_str());
        }
        // Spot values, written out by hand.
        const auto f32 = *(*file)->find("t_f32");
        float v[3] = {};
        QVERIFY((*file)->read(f32, 0, 3, v).ok());
        QCOMPARE(v[0], -1.75f);
        QCOMPARE(v[2], -1.25f);
        const auto bf16 = *(*file)->find("t_bf16");
        uint16_t b = 0;
        QVERIFY((*file)->read(bf16, 8, 1, &b).ok());  // (8 - 7) * 0.25 = 0.25 = 0x3E80 in bf16
        QCOMPARE(b, uint16_t(0x3E80));
        const auto scalar = *(*file)->find("scalar_f32");
        QVERIFY((*file)->tensors()[scalar].shape.empty());
        QCOMPARE((*file)->tensors()[scalar].elementCount(), uint64_t(1));
        float s = 0;
        QVERIFY((*file)->read(scalar, 0, 1, &s).ok());
        QCOMPARE(s, 2.5f);
        for (const char* empty : {"empty_bf16", "empty_i32"}) {
            const auto e = (*file)->find(empty);
            QVERIFY(e);
            QCOMPARE((*file)->tensors()[*e].elementCount(), uint64_t(0));
            QVERIFY((*file)->read(*e, 0, 0, nullptr).ok());
            QVERIFY(!(*file)->read(*e, 0, 1, &s).ok());
        }
    }

    void warnings()
    {
        auto file = openSafetensors(str(good("warnings")));
        QVERIFY2(file.ok(), file.ok() ? "" : file.message().c_str());
        const auto& w = (*file)->warnings();
        QCOMPARE(w.size(), size_t(2));
        QVERIFY2(w[0].find("2 non-string") != std::string::npos, w[0].c_str());
        QVERIFY2(w[1].find("unknown key") != std::string::npos, w[1].c_str());
        QCOMPARE((*file)->attributes().at("epoch"), std::string("3"));
        QCOMPARE((*file)->attributes().at("framework"), std::string("pt"));
    }

    void badFiles_data()
    {
        QTest::addColumn<QString>("name");
        QTest::addColumn<QString>("phrase");
        const std::pair<const char*, const char*> rows[] = {
            {"empty", "empty file"},
            {"short", "file too small for a safetensors header (5 bytes"},
            {"truncated", "extend past the end of the 14-byte data buffer"},
            {"truncated_header", "is larger than the rest of the file (12 bytes"},
            {"header_2p60", "header size 1152921504606846976 exceeds the limit of 100000000 bytes"},
            {"header_over_limit", "header size 100000001 exceeds the limit"},
            {"header_zero", "header is not valid JSON"},
            {"offsets_past_end",
             "tensor 'x' data_offsets [0, 16] extend past the end of the 8-byte data buffer"},
            {"trailing_data", "8 bytes of data after the last tensor"},
            {"overlap", "tensors 'a' [0, 8] and 'b' [4, 12] overlap"},
            {"gap", "gap of 4 bytes before tensor 'b' [12, 20]"},
            {"not_from_zero", "gap of 4 bytes before tensor 'a' [4, 12]"},
            {"wrong_size", "tensor 'x': shape [2, 3] of F32 needs 24 bytes but data_offsets [0, 20] span 20"},
            {"unknown_dtype_c64", "unsupported dtype 'C64' for tensor 'x'"},
            {"unknown_dtype_f8_e8m0", "unsupported dtype 'F8_E8M0' for tensor 'scale'"},
            {"unknown_dtype_f4", "unsupported dtype 'F4' for tensor 'w'"},
            {"lowercase_dtype", "unsupported dtype 'f32' for tensor 'x'"},
            {"not_json", "header is not valid JSON"},
            {"invalid_utf8", "header is not valid JSON"},
            {"nul_in_header", "NUL byte at header offset"},
            {"non_object", "header is not a JSON object (it is array)"},
            {"string_header", "header is not a JSON object (it is string)"},
            {"entry_not_object", "tensor 'x': entry is not a JSON object"},
            {"missing_dtype", "tensor 'x' has no \"dtype\""},
            {"missing_shape", "tensor 'x' has no \"shape\""},
            {"missing_offsets", "tensor 'x' has no \"data_offsets\""},
            {"dtype_not_string", "tensor 'x': \"dtype\" is not a string"},
            {"shape_not_array", "tensor 'x': \"shape\" is not an array"},
            {"negative_dim", "tensor 'x': shape dimension 0 (-1) is not a non-negative integer"},
            {"float_dim", "shape dimension 0 (2.5) is not a non-negative integer"},
            {"offsets_three", "tensor 'x': \"data_offsets\" is not [begin, end]"},
            {"offsets_strings", "tensor 'x': \"data_offsets\" is not [begin, end]"},
            {"offsets_reversed", "tensor 'x': data_offsets [8, 0] end before they begin"},
            {"huge_dims_overflow", "shape [4294967296, 4294967296] overflows a 64-bit element count"},
            {"huge_bytes_overflow", "shape [4611686018427387904] of F32 overflows a 64-bit byte count"},
            {"huge_dims_beyond_u64", "shape dimension 0"},
            {"duplicate_keys", "duplicate tensor name 'x'"},
            {"duplicate_in_entry", "entry 'x' has a duplicate key 'dtype'"},
            {"deep_nesting", "header JSON nests deeper than 64 levels"},
            {"random_bytes", ""},
            {"random_header", "header is not valid JSON"},
        };
        for (const auto& [name, phrase] : rows) QTest::newRow(name) << QString(name) << QString(phrase);
        // Every malformed file the script wrote has a row.
        QCOMPARE(QDir(m_bad).entryList(QDir::Files).size(), qsizetype(std::size(rows)));
    }
    void badFiles()
    {
        QFETCH(QString, name);
        QFETCH(QString, phrase);
        const std::string path = str(bad(name));
        QVERIFY(QFile::exists(bad(name)));

        auto file = openSafetensors(path);
        QVERIFY(!file.ok());
        const QString message = QString::fromStdString(file.message());
        QVERIFY2(message.startsWith(QString::fromStdString(path) + ": "), qPrintable(message));
        QVERIFY2(message.contains(phrase), qPrintable(message));
        QVERIFY2(!message.contains('\n'), qPrintable(message));

        // The in-memory parser applies the same checks with the same words.
        const QByteArray all = fileBytes(bad(name));
        auto parsed = parseSafetensorsBytes(path, all.constData(), size_t(all.size()));
        QVERIFY(!parsed.ok());
        QCOMPARE(QString::fromStdString(parsed.message()), message);

        // Dispatch by content never crashes and names the file (a file that does not even look
        // like safetensors gets the generic "not a tensor file" error).
        auto any = openTensorFile(path);
        QVERIFY(!any.ok());
        QVERIFY2(QString::fromStdString(any.message()).startsWith(QString::fromStdString(path) + ": "),
                 any.message().c_str());
        if (looksLikeSafetensors(path)) QCOMPARE(QString::fromStdString(any.message()), message);
    }

    void looksLike_data()
    {
        QTest::addColumn<QString>("path");
        QTest::addColumn<bool>("expected");
        for (const QString& key : m_manifest.keys()) QTest::newRow(qPrintable(key)) << good(key) << true;
        QTest::newRow("truncated data") << bad("truncated") << true;
        QTest::newRow("overlap") << bad("overlap") << true;
        QTest::newRow("empty") << bad("empty") << false;
        QTest::newRow("short") << bad("short") << false;
        QTest::newRow("truncated header") << bad("truncated_header") << false;
        QTest::newRow("2^60") << bad("header_2p60") << false;
        QTest::newRow("over limit") << bad("header_over_limit") << false;
        QTest::newRow("not json") << bad("not_json") << false;
        QTest::newRow("array") << bad("non_object") << false;
        QTest::newRow("manifest") << m_good + "/manifest.json" << false;
        QTest::newRow("directory") << m_good << false;
        QTest::newRow("missing") << m_dir.filePath("missing.safetensors") << false;
    }
    void looksLike()
    {
        QFETCH(QString, path);
        QFETCH(bool, expected);
        QCOMPARE(looksLikeSafetensors(str(path)), expected);
    }

    void openErrors()
    {
        const std::string missing = str(m_dir.filePath("missing.safetensors"));
        auto a = openSafetensors(missing);
        QVERIFY(!a.ok());
        QVERIFY(a.message().starts_with(missing + ": cannot open"));
        auto b = openSafetensors(str(m_good));
        QVERIFY(!b.ok());
        QCOMPARE(b.message(), str(m_good) + ": is a directory, not a tensor file");
        auto c = openTensorFile(missing);
        QVERIFY(!c.ok());
        QCOMPARE(c.message(), missing + ": no such file");
        auto d = openTensorFile(str(bad("overlap")));
        QVERIFY(!d.ok());
        QVERIFY2(d.message().find("overlap") != std::string::npos, d.message().c_str());
        auto e = openTensorFile(str(good("all_dtypes")));
        QVERIFY(e.ok());
        QCOMPARE(std::string(fileFormatName((*e)->format())), std::string("safetensors"));
    }

    void writerRoundTrip()
    {
        std::vector<QByteArray> data;
        std::vector<SafetensorsEntry> entries;
        std::vector<uint64_t> shapes[] = {{3, 5}, {7}, {2, 2, 3}};
        size_t k = 0;
        for (DType t : kAllDTypes) {
            SafetensorsEntry e{"layers." + std::to_string(k) + "." + std::string(dtypeName(t)), t,
                               shapes[k % 3], nullptr};
            uint64_t n = 1;
            for (uint64_t d : e.shape) n *= d;
            data.push_back(formulaBytes(t, n));
            entries.push_back(e);
            ++k;
        }
        data.push_back(formulaBytes(DType::Float64, 1));
        entries.push_back({"scalar", DType::Float64, {}, nullptr});
        data.push_back({});
        entries.push_back({"zero.a", DType::BFloat16, {4, 0}, nullptr});
        data.push_back({});
        entries.push_back({"zero.b", DType::UInt8, {0}, nullptr});
        for (size_t i = 0; i < entries.size(); ++i)
            if (!data[i].isEmpty()) entries[i].data = data[i].constData();
        const std::map<std::string, std::string> metadata{{"format", "pt"}, {"caf\xc3\xa9", "\xe2\x9c\x93"}};

        const std::string path = str(scratch("roundtrip.safetensors"));
        const Status w = writeSafetensors(path, entries, metadata);
        QVERIFY2(w.ok(), w.message().c_str());
        QVERIFY(faultline::test::tempFilesBeside(QString::fromStdString(path)).isEmpty());

        const QByteArray bytes = fileBytes(QString::fromStdString(path));
        uint64_t n = 0;
        std::memcpy(&n, bytes.constData(), 8);
        QCOMPARE(n % 8, uint64_t(0));
        qsizetype payload = 0;
        for (const QByteArray& d : data) payload += d.size();
        QCOMPARE(bytes.size(), qsizetype(8 + n) + payload);
        // Independent look at the header: valid JSON with the upstream dtype strings.
        const QJsonObject header = QJsonDocument::fromJson(bytes.mid(8, qsizetype(n))).object();
        QCOMPARE(header.value("layers.3.bfloat16").toObject().value("dtype").toString(),
                 QStringLiteral("BF16"));
        QCOMPARE(header.value("layers.4.float8_e4m3fn").toObject().value("dtype").toString(),
                 QStringLiteral("F8_E4M3"));
        QCOMPARE(header.value("__metadata__").toObject().value(QStringLiteral("caf\u00e9")).toString(),
                 QStringLiteral("\u2713"));

        auto file = openTensorFile(path);
        QVERIFY2(file.ok(), file.ok() ? "" : file.message().c_str());
        QCOMPARE((*file)->tensors().size(), entries.size());
        QCOMPARE((*file)->attributes(), metadata);
        QVERIFY((*file)->warnings().empty());
        for (size_t i = 0; i < entries.size(); ++i) {
            const auto index = (*file)->find(entries[i].name);
            QVERIFY2(index, entries[i].name.c_str());
            const TensorInfo& info = (*file)->tensors()[*index];
            QCOMPARE(info.dtype, entries[i].dtype);
            QCOMPARE(info.shape, entries[i].shape);
            QCOMPARE(readWhole(**file, *index), data[i]);
        }
        // In offset order: the writer lays data out in the order given.
        for (size_t i = 0; i < std::size(kAllDTypes); ++i)
            QCOMPARE((*file)->tensors()[i].name, entries[i].name);

        auto memory = encodeSafetensors(entries, metadata);
        QVERIFY(memory.ok());
        QCOMPARE(QByteArray::fromStdString(*memory), bytes);
    }

    void writerErrors_data()
    {
        QTest::addColumn<int>("which");
        QTest::addColumn<QString>("phrase");
        QTest::newRow("duplicate") << 0 << "duplicate tensor name 'a'";
        QTest::newRow("reserved") << 1 << "'__metadata__' is reserved";
        QTest::newRow("no data") << 2 << "tensor 'a': no data";
        QTest::newRow("overflow") << 3 << "overflows a 64-bit byte count";
        QTest::newRow("bad utf-8") << 4 << "cannot encode the header";
    }
    void writerErrors()
    {
        QFETCH(int, which);
        QFETCH(QString, phrase);
        const uint32_t v[2] = {1, 2};
        std::vector<SafetensorsEntry> entries;
        switch (which) {
            case 0:
                entries = {{"a", DType::UInt32, {1}, v}, {"a", DType::UInt32, {1}, v + 1}};
                break;
            case 1:
                entries = {{"__metadata__", DType::UInt32, {1}, v}};
                break;
            case 2:
                entries = {{"a", DType::UInt32, {2}, nullptr}};
                break;
            case 3:
                entries = {{"a", DType::UInt32, {uint64_t(1) << 62}, v}};
                break;
            case 4:
                entries = {{"bad\xff", DType::UInt32, {1}, v}};
                break;
        }
        // A failed write leaves an existing file untouched and no temporary behind.
        const QString qpath = scratch(QStringLiteral("writer_error_%1.safetensors").arg(which));
        const std::string path = str(qpath);
        const uint32_t keep = 7;
        QVERIFY(writeSafetensors(path, {{"keep", DType::UInt32, {1}, &keep}}).ok());
        const QByteArray before = fileBytes(qpath);

        const Status s = writeSafetensors(path, entries);
        QVERIFY(!s.ok());
        QVERIFY2(s.message().starts_with(path + ": "), s.message().c_str());
        QVERIFY2(QString::fromStdString(s.message()).contains(phrase), s.message().c_str());
        QCOMPARE(fileBytes(qpath), before);
        QVERIFY(faultline::test::tempFilesBeside(qpath).isEmpty());
    }

    void writerUnwritableDirectory()
    {
        const std::string path = str(m_dir.filePath("no/such/dir/x.safetensors"));
        const uint8_t b = 1;
        const Status s = writeSafetensors(path, {{"x", DType::UInt8, {1}, &b}});
        QVERIFY(!s.ok());
        QVERIFY2(s.message().starts_with(path + ": cannot create"), s.message().c_str());
    }

    void emptyFileRoundTrip()
    {
        const std::string path = str(scratch("nothing.safetensors"));
        QVERIFY(writeSafetensors(path, {}).ok());
        const QByteArray bytes = fileBytes(QString::fromStdString(path));
        QCOMPARE(bytes, QByteArray("\x08\0\0\0\0\0\0\0{}      ", 16));  // as the upstream writer
        auto file = openTensorFile(path);
        QVERIFY(file.ok());
        QVERIFY((*file)->tensors().empty());
        QVERIFY((*file)->attributes().empty());
    }

    void chunkedReads_data()
    {
        QTest::addColumn<QString>("path");
        QTest::addColumn<QString>("tensor");
        QTest::addColumn<int>("chunk");
        for (int chunk : {1, 3, 7, 13, 64, 333, 999, 1000, 5000}) {
            QTest::addRow("f32 by %d", chunk) << "chunks"
                                              << "f32" << chunk;
            QTest::addRow("bf16 by %d", chunk) << "chunks"
                                               << "bf16" << chunk;
        }
        for (int chunk : {1, 5, 7})
            QTest::addRow("fixture f8 by %d", chunk) << "fixture"
                                                     << "t_f8_e4m3" << chunk;
    }
    void chunkedReads()
    {
        QFETCH(QString, path);
        QFETCH(QString, tensor);
        QFETCH(int, chunk);
        std::string file;
        if (path == "fixture") {
            file = str(good("all_dtypes"));
        } else {
            file = str(scratch("chunks.safetensors"));
            const QByteArray f32 = formulaBytes(DType::Float32, 1000);
            const QByteArray bf16 = formulaBytes(DType::BFloat16, 777);
            QVERIFY(writeSafetensors(file, {{"f32", DType::Float32, {10, 100}, f32.constData()},
                                            {"bf16", DType::BFloat16, {777}, bf16.constData()}})
                        .ok());
        }
        auto opened = openTensorFile(file);
        QVERIFY(opened.ok());
        const TensorFile& f = **opened;
        const size_t index = *f.find(str(tensor));
        const QByteArray whole = readWhole(f, index);
        const uint64_t n = f.tensors()[index].elementCount();
        const unsigned size = dtypeSize(f.tensors()[index].dtype);
        QByteArray pieces;
        for (uint64_t first = 0; first < n; first += uint64_t(chunk)) {
            const uint64_t count = std::min<uint64_t>(uint64_t(chunk), n - first);
            QByteArray piece(qsizetype(count * size), '\xAB');
            const Status s = f.read(index, first, count, piece.data());
            QVERIFY2(s.ok(), s.message().c_str());
            pieces += piece;
        }
        QCOMPARE(pieces, whole);
    }

    void outOfRangeReads_data()
    {
        const uint64_t max = std::numeric_limits<uint64_t>::max();
        QTest::addColumn<bool>("validIndex");  // t_f32 (15 elements), else index 99
        QTest::addColumn<qulonglong>("first");
        QTest::addColumn<qulonglong>("count");
        QTest::addColumn<bool>("nullDst");
        QTest::addColumn<QString>("phrase");  // "" = must succeed
        QTest::newRow("whole") << true << 0ull << 15ull << false << "";
        QTest::newRow("last") << true << 14ull << 1ull << false << "";
        QTest::newRow("nothing at end") << true << 15ull << 0ull << false << "";
        QTest::newRow("nothing, null dst") << true << 3ull << 0ull << true << "";
        QTest::newRow("past end") << true << 15ull << 1ull << false
                                  << "tensor 't_f32': elements [15, +1) are out of range (it has 15)";
        QTest::newRow("one too many") << true << 0ull << 16ull << false << "out of range";
        QTest::newRow("first huge") << true << qulonglong(max) << 2ull << false << "out of range";
        QTest::newRow("count wraps") << true << 1ull << qulonglong(max) << false << "out of range";
        QTest::newRow("index") << false << 0ull << 1ull << false
                               << "no tensor with index 99 (the file has 18)";
        QTest::newRow("null dst") << true << 0ull << 1ull << true << "tensor 't_f32': no destination buffer";
    }
    void outOfRangeReads()
    {
        QFETCH(bool, validIndex);
        QFETCH(qulonglong, first);
        QFETCH(qulonglong, count);
        QFETCH(bool, nullDst);
        QFETCH(QString, phrase);
        const std::string path = str(good("all_dtypes"));
        auto file = openSafetensors(path);
        QVERIFY(file.ok());
        const size_t index = validIndex ? *(*file)->find("t_f32") : 99;
        float buffer[16] = {};
        const Status s = (*file)->read(index, first, count, nullDst ? nullptr : buffer);
        if (phrase.isEmpty()) {
            QVERIFY2(s.ok(), s.message().c_str());
            if (count == 15) QCOMPARE(buffer[14], 1.75f);  // (14 - 7) * 0.25
        } else {
            QVERIFY(!s.ok());
            QVERIFY2(s.message().starts_with(path + ": "), s.message().c_str());
            QVERIFY2(QString::fromStdString(s.message()).contains(phrase), s.message().c_str());
        }
    }

    void concurrentReads()
    {
        const std::string path = str(scratch("concurrent.safetensors"));
        const QByteArray a = formulaBytes(DType::Int64, 4096);
        const QByteArray b = formulaBytes(DType::UInt16, 10000);
        QVERIFY(writeSafetensors(path, {{"a", DType::Int64, {4096}, a.constData()},
                                        {"b", DType::UInt16, {100, 100}, b.constData()}})
                    .ok());
        auto file = openTensorFile(path);
        QVERIFY(file.ok());
        const TensorFile& f = **file;
        std::atomic<int> mismatches{0};
        std::vector<std::thread> threads;
        for (int t = 0; t < 4; ++t) {
            threads.emplace_back([&, t] {
                const size_t index = size_t(t % 2);
                const QByteArray& expected = index == 0 ? a : b;
                const unsigned size = index == 0 ? 8 : 2;
                const uint64_t n = uint64_t(expected.size()) / size;
                QByteArray piece(qsizetype(97 * size), '\0');
                for (int round = 0; round < 20; ++round)
                    for (uint64_t first = uint64_t(t); first < n; first += 97) {
                        const uint64_t count = std::min<uint64_t>(97, n - first);
                        if (!f.read(index, first, count, piece.data()).ok() ||
                            std::memcmp(piece.constData(), expected.constData() + first * size,
                                        count * size) != 0)
                            ++mismatches;
                    }
            });
        }
        for (auto& th : threads) th.join();
        QCOMPARE(mismatches.load(), 0);
    }

    void truncatedAfterOpen()
    {
        const std::string path = str(scratch("shrinks.safetensors"));
        const QByteArray a = formulaBytes(DType::Float32, 64);
        QVERIFY(writeSafetensors(path, {{"w", DType::Float32, {64}, a.constData()}}).ok());
        auto file = openTensorFile(path);
        QVERIFY(file.ok());
        std::filesystem::resize_file(path, std::filesystem::file_size(path) - 100);
        QByteArray out(a.size(), '\0');
        const Status s = (*file)->read(0, 0, 64, out.data());
        QVERIFY(!s.ok());
        QVERIFY2(s.message().starts_with(path + ": tensor 'w': file ends at byte"), s.message().c_str());
        QVERIFY((*file)->read(0, 0, 8, out.data()).ok());  // what is still there reads fine
        QCOMPARE(out.left(32), a.left(32));
    }

    void namesAreMadePrintable()
    {
        const QByteArray header =
            "{\"bad\\nname\\u0001\": {\"dtype\": \"X\", \"shape\": [], \"data_offsets\": [0, 0]}}";
        QByteArray bytes(8, '\0');
        bytes[0] = char(header.size());
        bytes += header;
        auto parsed = parseSafetensorsBytes("mem", bytes.constData(), size_t(bytes.size()));
        QVERIFY(!parsed.ok());
        QCOMPARE(parsed.message(), std::string("mem: unsupported dtype 'X' for tensor 'bad\\x0aname\\x01'"));
    }

    void rejectedInMemory_data()
    {
        QTest::addColumn<QByteArray>("header");
        QTest::addColumn<QString>("phrase");
        QTest::newRow("array with duplicate keys")
            << QByteArray(R"([{"a": 1, "a": 2}])") << "not a JSON object (it is array)";
        QTest::newRow("byte-order mark") << QByteArray("\xEF\xBB\xBF{}") << "byte-order mark";
        QTest::newRow("duplicate metadata")
            << QByteArray(R"({"__metadata__": {}, "__metadata__": {}})") << "duplicate key '__metadata__'";
        QTest::newRow("nesting 65") << QByteArray(R"({"__metadata__": )") + QByteArray(64, '[') +
                                           QByteArray(64, ']') + "}"
                                    << "nests deeper than 64 levels";
        QTest::newRow("brackets in strings")
            << QByteArray(R"({"__metadata__": {"k": ")") + QByteArray(200, '[') + "\"}}"
            << "";
        QTest::newRow("null metadata") << QByteArray(R"({"__metadata__": null})") << "";
    }
    void rejectedInMemory()
    {
        QFETCH(QByteArray, header);
        QFETCH(QString, phrase);
        QByteArray bytes(8, '\0');
        bytes[0] = char(header.size() & 0xff);
        bytes[1] = char(header.size() >> 8);
        bytes += header;
        auto parsed = parseSafetensorsBytes("mem", bytes.constData(), size_t(bytes.size()));
        if (phrase.isEmpty()) {
            QVERIFY2(parsed.ok(), parsed.ok() ? "" : parsed.message().c_str());
            QVERIFY(parsed->warnings.empty());
        } else {
            QVERIFY(!parsed.ok());
            QVERIFY2(QString::fromStdString(parsed.message()).contains(phrase), parsed.message().c_str());
        }
    }

    void headerSizeChecks()
    {
        const unsigned char exact[8] = {4, 0, 0, 0, 0, 0, 0, 0};
        QCOMPARE(checkSafetensorsHeaderSize("p", exact, 12).value(), uint64_t(4));
        QVERIFY(!checkSafetensorsHeaderSize("p", exact, 11).ok());
        const unsigned char limit[8] = {0x00, 0xE1, 0xF5, 0x05, 0, 0, 0, 0};  // 100,000,000
        QCOMPARE(checkSafetensorsHeaderSize("p", limit, 200'000'000).value(), kSafetensorsMaxHeaderSize);
        const unsigned char over[8] = {0x01, 0xE1, 0xF5, 0x05, 0, 0, 0, 0};
        QVERIFY(!checkSafetensorsHeaderSize("p", over, 200'000'000).ok());
        const unsigned char top[8] = {0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff};
        QVERIFY(!checkSafetensorsHeaderSize("p", top, std::numeric_limits<uint64_t>::max()).ok());
        QVERIFY(!parseSafetensorsBytes("p", nullptr, 0).ok());
    }
};

QTEST_APPLESS_MAIN(TestSafetensors)
#include "test_safetensors.moc"
