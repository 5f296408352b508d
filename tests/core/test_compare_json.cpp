// The JSON document of a comparison (core/compare/CompareJson.h): the public field names and
// their types, null region when nothing differs, non-finite numbers never written as invalid
// JSON, bit patterns as padded hex strings.
#include <QtTest>

#include "core/compare/CompareJson.h"
#include "core/io/MemoryTensorFile.h"
#include "test_compare_helpers.h"

using faultline::DType;
using nlohmann::json;
using namespace fltest;

class TestCompareJson : public QObject {
    Q_OBJECT

private slots:
    void documentShape();
    void identicalHasNullRegion();
    void nonFiniteValues();
    void hexBits_data();
    void hexBits();
    void optionalSections();
};

namespace {

faultline::CompareReport makeReport()
{
    faultline::MemoryTensorFile s("s.safetensors"), r("r.safetensors");
    Tensor ref = randomTensor(DType::BFloat16, {32, 48}, 1);
    Tensor sus = ref;
    for (uint64_t row = 0; row < 32; ++row)
        sus.bits[size_t(row * 48 + 7)] |= 0x0020;  // stuck bit 5 in column 7
    (void)s.add("w", DType::BFloat16, {32, 48}, pack(sus));
    (void)r.add("w", DType::BFloat16, {32, 48}, pack(ref));
    (void)s.add("only_s", DType::BFloat16, {32, 48}, pack(sus));
    (void)s.add("mismatch", DType::Float32, {2}, std::vector<std::byte>(8));
    (void)r.add("mismatch", DType::Float16, {2}, std::vector<std::byte>(4));
    faultline::CompareRunOptions o;
    o.compare.tolerance = faultline::Tolerance::ulp(2);
    return *faultline::compareFiles(s, r, o);
}

}  // namespace

void TestCompareJson::documentShape()
{
    const faultline::CompareReport rep = makeReport();
    const json j = json::parse(faultline::compareReportToJson(rep).dump());  // valid JSON text
    QVERIFY(j.is_object());
    QCOMPARE(j["suspect"].get<std::string>(), std::string("s.safetensors"));
    QCOMPARE(j["reference"].get<std::string>(), std::string("r.safetensors"));
    QCOMPARE(j["tolerance"].get<std::string>(), std::string("ulp:2"));
    QVERIFY(j["tensors"].is_array());
    QCOMPARE(j["tensors"].size(), size_t(1));
    const json& t = j["tensors"][0];
    struct Field {
        const char* name;
        json::value_t type;
    };
    const Field fields[] = {
        {"name", json::value_t::string},
        {"dtype", json::value_t::string},
        {"shape", json::value_t::array},
        {"elements", json::value_t::number_unsigned},
        {"mismatches", json::value_t::number_unsigned},
        {"beyond_tolerance", json::value_t::number_unsigned},
        {"nan_introduced", json::value_t::number_unsigned},
        {"inf_introduced", json::value_t::number_unsigned},
        {"max_abs_error", json::value_t::number_float},
        {"max_ulp", json::value_t::number_unsigned},
        {"bit_histogram", json::value_t::array},
        {"region", json::value_t::object},
        {"signature", json::value_t::object},
        {"top", json::value_t::array},
        {"nan_removed", json::value_t::number_unsigned},
        {"inf_removed", json::value_t::number_unsigned},
        {"mean_abs_error", json::value_t::number_float},
        {"rms_abs_error", json::value_t::number_float},
        {"ulp_histogram", json::value_t::array},
        {"abs_histogram", json::value_t::object},
        {"rel_histogram", json::value_t::object},
        {"bit_fields", json::value_t::array},
        {"bit_to_one", json::value_t::array},
        {"bit_to_zero", json::value_t::array},
        {"tile", json::value_t::object},
        {"anomalies", json::value_t::number_unsigned},
    };
    for (const Field& f : fields) {
        QVERIFY2(t.contains(f.name), f.name);
        QVERIFY2(t[f.name].type() == f.type,
                 qPrintable(QString("%1 is %2").arg(f.name, t[f.name].type_name())));
    }
    QCOMPARE(t["name"].get<std::string>(), std::string("w"));
    QCOMPARE(t["dtype"].get<std::string>(), std::string("bfloat16"));
    QCOMPARE(t["shape"], json({32, 48}));
    QCOMPARE(t["bit_histogram"].size(), size_t(16));
    QCOMPARE(t["bit_fields"][15].get<std::string>(), std::string("sign"));
    QCOMPARE(t["bit_fields"][7].get<std::string>(), std::string("exponent"));
    QCOMPARE(t["bit_fields"][6].get<std::string>(), std::string("mantissa"));
    QCOMPARE(t["ulp_histogram"].size(), size_t(65));
    // The stuck bit: every flip at bit 5, all 0 -> 1.
    const uint64_t flips = t["mismatches"].get<uint64_t>();
    QVERIFY(flips > 8);
    QCOMPARE(t["bit_histogram"][5].get<uint64_t>(), flips);
    QCOMPARE(t["bit_to_one"][5].get<uint64_t>(), flips);
    QCOMPARE(t["bit_to_zero"][5].get<uint64_t>(), uint64_t(0));
    // Region: half-open, column 7 only.
    QCOMPARE(t["region"]["cols"], json({7, 8}));
    QVERIFY(t["region"]["rows"][0].get<uint64_t>() < t["region"]["rows"][1].get<uint64_t>());
    // Signature.
    const json& sig = t["signature"];
    QCOMPARE(sig["kind"].get<std::string>(), std::string("stuck_bit"));
    QCOMPARE(sig["what"].get<std::string>(), std::string("stuck_bit"));
    QCOMPARE(sig["where"].get<std::string>(), std::string("column_stripe"));
    QVERIFY(sig["confidence"].is_number());
    QVERIFY(sig["detail"].is_string());
    QCOMPARE(sig["bit"].get<unsigned>(), 5u);
    QCOMPARE(sig["value"].get<unsigned>(), 1u);
    QCOMPARE(sig["field"].get<std::string>(), std::string("mantissa"));
    QVERIFY(sig["secondary"].is_array());
    // Top entries.
    QVERIFY(!t["top"].empty());
    const json& e = t["top"][0];
    for (const char* k : {"index", "row", "col", "suspect", "reference", "suspect_bits", "reference_bits",
                          "ulp", "abs_error", "rel_error", "beyond", "nonfinite"})
        QVERIFY2(e.contains(k), k);
    QCOMPARE(e["col"].get<uint64_t>(), uint64_t(7));
    QVERIFY(e["suspect_bits"].get<std::string>().size() == 6);  // 0x + 4 hex digits
    // Unpaired, not comparable (a dtype mismatch is a difference between the files, not an
    // error), no errors.
    QCOMPARE(j["unpaired"], json::parse(R"([{"side":"suspect","name":"only_s"}])"));
    QCOMPARE(j["not_comparable"].size(), size_t(1));
    QCOMPARE(j["not_comparable"][0]["name"].get<std::string>(), std::string("mismatch"));
    QVERIFY(j["not_comparable"][0]["message"].get<std::string>().find("dtype float32 (suspect) vs float16") !=
            std::string::npos);
    QCOMPARE(j["errors"], json::array());
    QCOMPARE(j["records"], json::array());
    QCOMPARE(j["not_compared"], json::array());
    QCOMPARE(j["summary"], json::parse(R"({"tensors":1,"tensors_beyond_tolerance":1,"tensors_bit_identical":0,
        "records":0,"records_differ":0,"not_comparable":1,"not_compared":0,"unpaired":1,"errors":0,"differ":true})"));
}

void TestCompareJson::identicalHasNullRegion()
{
    Tensor t = randomTensor(DType::Float32, {4, 4}, 1);
    auto d = compare(t, t);
    const json j = faultline::divergenceToJson(*d);
    QVERIFY(j["region"].is_null());
    QVERIFY(j["first_mismatch"].is_null());
    QCOMPARE(j["signature"]["kind"].get<std::string>(), std::string("identical"));
    QVERIFY(j["top"].empty());
    QCOMPARE(j["max_abs_error"].get<double>(), 0.0);
    QCOMPARE(j["max_error_note"].get<std::string>(), std::string("max |err| 0, max 0 ulp"));
    QCOMPARE(j["nonfinite_introduced"].get<uint64_t>(), uint64_t(0));
    QCOMPARE(j["signature"]["what"].get<std::string>(), std::string("none"));
    QCOMPARE(j["signature"]["where"].get<std::string>(), std::string("none"));
}

void TestCompareJson::nonFiniteValues()
{
    Tensor s, r;
    s.dtype = r.dtype = DType::Float64;
    s.shape = r.shape = {3};
    // NaN introduced, -inf introduced, and a finite pair whose difference overflows to inf.
    s.bits = {0x7ff8000000000000ull, 0xfff0000000000000ull, encode(DType::Float64, 1.7e308)};
    r.bits = {encode(DType::Float64, 1.0), encode(DType::Float64, 2.0), encode(DType::Float64, -1.7e308)};
    auto d = compare(s, r);
    QVERIFY(d.ok());
    const std::string text = faultline::divergenceToJson(*d).dump();
    const json j = json::parse(text);       // strict parser: NaN/Infinity tokens would throw
    QVERIFY(j["max_abs_error"].is_null());  // inf
    QCOMPARE(j["top"][0]["suspect"].get<std::string>(), std::string("nan"));
    QCOMPARE(j["top"][1]["suspect"].get<std::string>(), std::string("-inf"));
    QVERIFY(j["top"][0]["ulp"].is_null());
    QVERIFY(j["top"][0]["abs_error"].is_null());
    QCOMPARE(j["top"][0]["suspect_bits"].get<std::string>(), std::string("0x7ff8000000000000"));
    QCOMPARE(j["top"][2]["reference"].get<double>(), -1.7e308);
    // The maxima are over finite pairs, and the note says NaN/Inf were introduced beside them.
    QCOMPARE(j["nonfinite_introduced"].get<uint64_t>(), uint64_t(2));
    const std::string note = j["max_error_note"].get<std::string>();
    QVERIFY2(note.find("among finite pairs; 2 NaN/Inf introduced") != std::string::npos, note.c_str());
}

void TestCompareJson::hexBits_data()
{
    QTest::addColumn<quint64>("value");
    QTest::addColumn<unsigned>("bits");
    QTest::addColumn<QString>("hex");
    QTest::newRow("f32 one") << quint64(0x3f800000) << 32u << "0x3f800000";
    QTest::newRow("bf16 small") << quint64(0x1) << 16u << "0x0001";
    QTest::newRow("fp8") << quint64(0x7f) << 8u << "0x7f";
    QTest::newRow("f64") << quint64(0x8000000000000000ull) << 64u << "0x8000000000000000";
}

void TestCompareJson::hexBits()
{
    QFETCH(quint64, value);
    QFETCH(unsigned, bits);
    QFETCH(QString, hex);
    QCOMPARE(QString::fromStdString(faultline::bitsToHex(value, bits)), hex);
}

void TestCompareJson::optionalSections()
{
    Tensor ref = randomTensor(DType::Float32, {40, 40}, 1);
    Tensor sus = ref;
    sus.bits[100] ^= 0x00400000;
    auto d = compare(sus, ref);
    QVERIFY(!faultline::divergenceToJson(*d).contains("tiles"));
    const json j = faultline::divergenceToJson(*d, {true, true});
    QVERIFY(j["tiles"].is_array());
    QCOMPARE(j["tiles"].size(), d->tiles.levels().size());
    QCOMPARE(j["tiles"][0]["grid"], json({3, 3}));
    // element 100 = row 2, column 20: 16x16 tile (0, 1), grid index 1
    QCOMPARE(j["tiles"][0]["mismatches"], json({0, 1, 0, 0, 0, 0, 0, 0, 0}));
    QCOMPARE(j["spatial"]["first_indices"], json({100}));
}

QTEST_APPLESS_MAIN(TestCompareJson)
#include "test_compare_json.moc"
