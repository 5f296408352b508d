// Signature classification (core/compare/Signature.h): synthetic defects of each kind,
// generated with a seeded RNG in several float formats, alone and inside ±1-2 ulp rounding
// noise, must get the right primary kind, the right evidence (bit, tile size and position,
// rows/columns, address range, period) and the expected secondary findings.
#include <QtTest>

#include <set>

#include "core/compare/Tolerance.h"
#include "test_compare_helpers.h"

using faultline::DType;
using faultline::SignatureKind;
using namespace fltest;

Q_DECLARE_METATYPE(faultline::DType)

namespace {

enum class Gen {
    Identical,
    Noise,
    SingleBit,
    StuckLane,
    StuckTile,
    SignFlip,
    Exponent,
    NanInf,
    Tile64,
    Tiles32,
    RowStripe,
    ColumnStripe,
    Range,
    Periodic,
    Widespread,
    Scattered
};

constexpr uint64_t kRows = 256, kCols = 512;

unsigned mantissaBits(DType t)
{
    return faultline::bitLayout(t).mantissaBits;
}

// A multi-bit change far beyond rounding: the top two mantissa bits (fp8: mantissa MSB and
// exponent LSB, since their mantissas are too short).
uint64_t garbageMask(DType t)
{
    const unsigned m = mantissaBits(t);
    if (m >= 5) return (uint64_t(3) << (m - 2));
    return uint64_t(3) << (m - 1);
}

// A bit to stick: far enough above the LSB that the change is not rounding-sized.
unsigned stuckBit(DType t)
{
    switch (t) {
        case DType::Float32:
            return 20;
        case DType::BFloat16:
            return 5;
        case DType::Float16:
            return 8;
        case DType::Float8E4M3FN:
            return 2;
        default:
            return mantissaBits(t) - 1;
    }
}

bool finite(DType t, uint64_t b)
{
    return !isNonFinite(t, b);
}

void generate(Gen gen, DType dtype, double noise, Tensor& sus, Tensor& ref)
{
    ref = randomTensor(dtype, {kRows, kCols}, 101);
    sus = ref;
    if (noise > 0) addRoundingNoise(sus, noise, 102);
    std::mt19937_64 rng(103);
    const uint64_t n = kRows * kCols;
    const unsigned w = widthOf(dtype);
    const uint64_t sign = uint64_t(1) << (w - 1);
    const uint64_t g = garbageMask(dtype);
    auto at = [&](uint64_t r, uint64_t c) -> uint64_t& { return sus.bits[size_t(r * kCols + c)]; };
    switch (gen) {
        case Gen::Identical:
            sus = ref;
            break;
        case Gen::Noise:
            break;
        case Gen::SingleBit:
            for (int k = 0; k < 40; ++k) {
                const size_t i = rng() % n;
                for (;;) {
                    const unsigned b = 2 + unsigned(rng() % (w - 2));
                    const uint64_t nb = sus.bits[i] ^ (uint64_t(1) << b);
                    if (finite(dtype, nb) && finite(dtype, ref.bits[i] ^ (uint64_t(1) << b))) {
                        sus.bits[i] = nb;
                        break;
                    }
                }
            }
            break;
        case Gen::StuckLane:
            for (uint64_t r = 0; r < kRows; ++r)
                for (uint64_t c = 5; c < kCols; c += 32) at(r, c) |= uint64_t(1) << stuckBit(dtype);
            break;
        case Gen::StuckTile:
            for (uint64_t r = 64; r < 128; ++r)
                for (uint64_t c = 128; c < 192; ++c) at(r, c) &= ~(uint64_t(1) << stuckBit(dtype));
            break;
        case Gen::SignFlip:
            for (int k = 0; k < 50; ++k) sus.bits[rng() % n] ^= sign;
            break;
        case Gen::Exponent: {
            const auto layout = faultline::bitLayout(dtype);
            for (int k = 0; k < 60; ++k) {
                const size_t i = rng() % n;
                for (;;) {
                    const unsigned b1 = layout.mantissaBits + unsigned(rng() % layout.exponentBits);
                    const unsigned b2 = layout.mantissaBits + unsigned(rng() % layout.exponentBits);
                    if (b1 == b2) continue;
                    const uint64_t nb = ref.bits[i] ^ (uint64_t(1) << b1) ^ (uint64_t(1) << b2);
                    if (finite(dtype, nb) && decode(dtype, nb) != 0) {
                        sus.bits[i] = nb;
                        break;
                    }
                }
            }
            break;
        }
        case Gen::NanInf:
            for (int k = 0; k < 30; ++k)
                sus.bits[rng() % n] = encode(dtype, k % 3 == 2 ? INFINITY : std::nan(""));
            break;
        case Gen::Tile64:
            for (uint64_t r = 64; r < 128; ++r)
                for (uint64_t c = 128; c < 192; ++c) at(r, c) ^= g;
            break;
        case Gen::Tiles32:
            for (auto [tr, tc] : {std::pair<uint64_t, uint64_t>{2, 5}, {6, 1}})
                for (uint64_t r = tr * 32; r < tr * 32 + 32; ++r)
                    for (uint64_t c = tc * 32; c < tc * 32 + 32; ++c) at(r, c) ^= g;
            break;
        case Gen::RowStripe:
            for (uint64_t r : {7u, 100u})
                for (uint64_t c = 0; c < kCols; ++c) at(r, c) ^= g;
            break;
        case Gen::ColumnStripe:
            for (uint64_t r = 0; r < kRows; ++r) at(r, 33) ^= g;
            break;
        case Gen::Range:
            for (uint64_t i = 1000; i < 1800; ++i) sus.bits[i] ^= g;
            break;
        case Gen::Periodic:
            for (uint64_t i = 50; i < 20050; i += 100)
                for (uint64_t k = 0; k < 4; ++k) sus.bits[i + k] ^= g;
            break;
        case Gen::Widespread: {
            std::uniform_real_distribution<double> u(0, 1);
            for (auto& b : sus.bits)
                if (u(rng) < 0.3) b ^= g;
            break;
        }
        case Gen::Scattered:
            for (int k = 0; k < 20; ++k) sus.bits[rng() % n] ^= g;
            break;
    }
}

}  // namespace

Q_DECLARE_METATYPE(Gen)
Q_DECLARE_METATYPE(faultline::SignatureKind)

class TestCompareSignature : public QObject {
    Q_OBJECT

private slots:
    void classify_data();
    void classify();
    void kindNames();
    void stuckBitNeedsOneDirection();
    void mixed_data();
    void mixed();
};

void TestCompareSignature::classify_data()
{
    QTest::addColumn<DType>("dtype");
    QTest::addColumn<Gen>("gen");
    QTest::addColumn<double>("noise");
    QTest::addColumn<QString>("tolerance");
    QTest::addColumn<SignatureKind>("kind");
    QTest::addColumn<QString>("evidence");   // key=value;... checked below
    QTest::addColumn<QString>("secondary");  // kinds that must be among the secondary findings

    struct Fmt {
        DType t;
        const char* name;
    };
    const Fmt all[] = {{DType::Float32, "f32"},
                       {DType::BFloat16, "bf16"},
                       {DType::Float16, "f16"},
                       {DType::Float8E4M3FN, "e4m3"}};
    for (const Fmt& f : all) {
        const bool fp8 = f.t == DType::Float8E4M3FN;
        const QString bit = QString("bit=%1").arg(stuckBit(f.t));
        auto row = [&](const char* what, Gen gen, double noise, const char* tol, SignatureKind kind,
                       QString evidence, QString secondary) {
            QTest::newRow(
                qPrintable(QString("%1 %2%3 %4").arg(f.name, what, noise > 0 ? " +noise" : "", tol)))
                << f.t << gen << noise << QString(tol) << kind << evidence << secondary;
        };
        row("identical", Gen::Identical, 0, "exact", SignatureKind::Identical, "", "");
        row("noise", Gen::Noise, 0.3, "ulp:2", SignatureKind::Rounding, "", "");
        row("noise", Gen::Noise, 0.3, "exact", SignatureKind::Rounding, "", "");
        for (double noise : {0.0, 0.3}) {
            const char* tol = noise > 0 ? "exact" : "ulp:2";
            const QString rounding = noise > 0 ? "rounding" : "";
            row("single bit", Gen::SingleBit, noise, tol, SignatureKind::SingleBitRandom, "", rounding);
            row("stuck lane", Gen::StuckLane, noise, tol, SignatureKind::StuckBit, bit + ";value=1",
                "column_stripe" + (noise > 0 ? QString(",rounding") : QString()));
            row("stuck tile", Gen::StuckTile, noise, tol, SignatureKind::StuckBit,
                bit + ";value=0;tile=64x64;tiles=1,2", "tile_clustered");
            row("sign flip", Gen::SignFlip, noise, tol, SignatureKind::SignFlip, "", rounding);
            row("nan/inf", Gen::NanInf, noise, tol, SignatureKind::NanInf, "", rounding);
            row("tile 64", Gen::Tile64, noise, tol, SignatureKind::TileClustered, "tile=64x64;tiles=1,2",
                fp8 ? "exponent" : "");
            row("tiles 32", Gen::Tiles32, noise, tol, SignatureKind::TileClustered,
                "tile=32x32;tiles=2,5;tiles=6,1", "");
            row("row stripe", Gen::RowStripe, noise, tol, SignatureKind::RowStripe, "lines=7,100", "");
            row("column stripe", Gen::ColumnStripe, noise, tol, SignatureKind::ColumnStripe, "lines=33", "");
            row("range", Gen::Range, noise, tol, SignatureKind::AddressRange, "range=1000,1800", "");
            row("periodic", Gen::Periodic, noise, tol, SignatureKind::AddressRange, "period=100;run=4", "");
            if (!fp8) {
                row("exponent", Gen::Exponent, noise, tol, SignatureKind::Exponent, "", rounding);
                row("widespread", Gen::Widespread, noise, tol, SignatureKind::Widespread, "", "");
                row("scattered", Gen::Scattered, noise, tol, SignatureKind::Scattered, "", "");
            }
        }
    }
}

void TestCompareSignature::classify()
{
    QFETCH(DType, dtype);
    QFETCH(Gen, gen);
    QFETCH(double, noise);
    QFETCH(QString, tolerance);
    QFETCH(SignatureKind, kind);
    QFETCH(QString, evidence);
    QFETCH(QString, secondary);

    Tensor sus, ref;
    generate(gen, dtype, noise, sus, ref);
    faultline::CompareOptions opt;
    opt.tolerance = *faultline::parseTolerance(tolerance.toStdString());
    opt.chunkElements = 20000;  // several chunks, boundaries inside rows
    opt.threads = 2;
    auto res = compare(sus, ref, opt);
    QVERIFY2(res.ok(), res.ok() ? "" : res.message().c_str());
    const faultline::Signature& s = res->signature;
    QString all = QString::fromStdString(std::string(faultline::signatureKindName(s.kind)) + ": " + s.detail);
    for (const auto& f : s.secondary)
        all += QString::fromStdString("\n  + " + std::string(faultline::signatureKindName(f.kind)) + ": " +
                                      f.detail);
    QVERIFY2(
        s.kind == kind,
        qPrintable("expected " + QString::fromStdString(std::string(faultline::signatureKindName(kind))) +
                   ", got " + all));
    QVERIFY2(s.confidence >= 0.5 && s.confidence <= 1.0, qPrintable(all));
    QVERIFY(!s.detail.empty());

    // Evidence comes from the primary finding, or (for stuck bits) from a secondary one too.
    auto evidenceOf = [&](const QString& key) -> std::vector<const faultline::SignatureEvidence*> {
        std::vector<const faultline::SignatureEvidence*> out{&s.evidence};
        for (const auto& f : s.secondary) out.push_back(&f.evidence);
        (void)key;
        return out;
    };
    std::set<std::pair<uint64_t, uint64_t>> expectedTiles;
    for (const QString& item : evidence.split(';', Qt::SkipEmptyParts)) {
        const QString key = item.section('=', 0, 0), value = item.section('=', 1);
        if (key == "bit") {
            QVERIFY2(s.evidence.bit && *s.evidence.bit == value.toUInt(), qPrintable(all));
        } else if (key == "value") {
            QVERIFY2(s.evidence.bitValue && *s.evidence.bitValue == value.toUInt(), qPrintable(all));
        } else if (key == "tile") {
            bool found = false;
            for (auto* e : evidenceOf(key))
                found |= QString("%1x%2").arg(e->tileRows).arg(e->tileCols) == value;
            QVERIFY2(found, qPrintable(all));
        } else if (key == "tiles") {
            expectedTiles.insert(
                {value.section(',', 0, 0).toULongLong(), value.section(',', 1, 1).toULongLong()});
        } else if (key == "lines") {
            std::vector<uint64_t> lines;
            for (const QString& v : value.split(',')) lines.push_back(v.toULongLong());
            QVERIFY2(s.evidence.lines == lines, qPrintable(all));
        } else if (key == "range") {
            QVERIFY2(s.evidence.range, qPrintable(all));
            QCOMPARE(s.evidence.range->first, value.section(',', 0, 0).toULongLong());
            QCOMPARE(s.evidence.range->second, value.section(',', 1, 1).toULongLong());
        } else if (key == "period") {
            QCOMPARE(s.evidence.period, value.toULongLong());
        } else if (key == "run") {
            QCOMPARE(s.evidence.runLength, value.toULongLong());
        } else {
            QFAIL(qPrintable("unknown evidence key " + key));
        }
    }
    if (!expectedTiles.empty()) {
        bool found = false;
        for (auto* e : evidenceOf("tiles")) {
            std::set<std::pair<uint64_t, uint64_t>> got(e->tiles.begin(), e->tiles.end());
            found |= got == expectedTiles;
        }
        QVERIFY2(found, qPrintable(all));
    }
    for (const QString& k : secondary.split(',', Qt::SkipEmptyParts)) {
        bool found = false;
        for (const auto& f : s.secondary)
            found |= QString::fromStdString(std::string(faultline::signatureKindName(f.kind))) == k;
        QVERIFY2(found, qPrintable("missing secondary " + k + " in " + all));
    }
    if (gen == Gen::StuckLane) {
        for (const auto& f : s.secondary)
            if (f.kind == SignatureKind::ColumnStripe) {
                QCOMPARE(f.evidence.stride, uint64_t(32));
                QCOMPARE(f.evidence.lineCount, kCols / 32);
            }
        QCOMPARE(s.evidence.field, std::string(faultline::bitFieldName(dtype, stuckBit(dtype))));
    }
}

void TestCompareSignature::kindNames()
{
    const char* names[] = {"identical",     "rounding",   "single_bit_random", "stuck_bit",  "sign_flip",
                           "exponent",      "nan_inf",    "tile_clustered",    "row_stripe", "column_stripe",
                           "address_range", "widespread", "scattered"};
    std::set<int> seen;
    for (const char* n : names) {
        auto k = faultline::parseSignatureKind(n);
        QVERIFY2(k.has_value(), n);
        QCOMPARE(std::string(faultline::signatureKindName(*k)), std::string(n));
        seen.insert(int(*k));
    }
    QCOMPARE(seen.size(), std::size(names));
    QVERIFY(!faultline::parseSignatureKind("stuck").has_value());
}

void TestCompareSignature::stuckBitNeedsOneDirection()
{
    // The same lane and bit, but flipped (XOR) instead of forced: both directions, so not stuck.
    Tensor ref = randomTensor(DType::Float32, {kRows, kCols}, 101);
    Tensor sus = ref;
    for (uint64_t r = 0; r < kRows; ++r)
        for (uint64_t c = 5; c < kCols; c += 32) sus.bits[size_t(r * kCols + c)] ^= uint64_t(1) << 20;
    auto res = compare(sus, ref);
    QVERIFY(res.ok());
    QCOMPARE(res->signature.kind, SignatureKind::ColumnStripe);
    QCOMPARE(res->signature.evidence.stride, uint64_t(32));
    bool single = false;
    for (const auto& f : res->signature.secondary) single |= f.kind == SignatureKind::SingleBitRandom;
    QVERIFY(single);
}

namespace {

enum class Mix { NanInTile, ExponentInTile, StuckLsbExact, IntStuckLane, SparseFewAnomalies };

}  // namespace

Q_DECLARE_METATYPE(Mix)

void TestCompareSignature::mixed_data()
{
    QTest::addColumn<Mix>("mix");
    QTest::addColumn<SignatureKind>("kind");
    QTest::addColumn<QString>("secondary");
    // NaNs inside one SM's tile: NaN/Inf is what to act on first, the tile says where.
    QTest::newRow("nan in tile") << Mix::NanInTile << SignatureKind::NanInf << "tile_clustered";
    // Exponent garbage inside one tile: where (the SM) first, how (exponent bits) second.
    QTest::newRow("exponent in tile") << Mix::ExponentInTile << SignatureKind::TileClustered << "exponent";
    // Bit 0 forced to 1: 1-ulp changes (rounding-sized) but all one way, beyond `exact`.
    QTest::newRow("stuck lsb, exact") << Mix::StuckLsbExact << SignatureKind::StuckBit << "";
    // Integers: a lane with bit 12 stuck at 1.
    QTest::newRow("int32 stuck lane") << Mix::IntStuckLane << SignatureKind::StuckBit << "column_stripe";
    // Three anomalies: too few for spatial or stuck-bit claims.
    QTest::newRow("three anomalies") << Mix::SparseFewAnomalies << SignatureKind::Scattered << "";
}

void TestCompareSignature::mixed()
{
    QFETCH(Mix, mix);
    QFETCH(SignatureKind, kind);
    QFETCH(QString, secondary);
    const DType dtype = mix == Mix::IntStuckLane ? DType::Int32 : DType::Float32;
    Tensor ref = randomTensor(dtype, {kRows, kCols}, 7);
    Tensor sus = ref;
    std::mt19937_64 rng(8);
    auto at = [&](uint64_t r, uint64_t c) -> uint64_t& { return sus.bits[size_t(r * kCols + c)]; };
    switch (mix) {
        case Mix::NanInTile:
            for (int k = 0; k < 200; ++k) at(128 + rng() % 32, 256 + rng() % 32) = 0x7fc00000;
            break;
        case Mix::ExponentInTile:
            for (uint64_t r = 32; r < 64; ++r)
                for (uint64_t c = 0; c < 32; ++c) at(r, c) ^= 0x01800000;  // exponent bits 23 and 24
            break;
        case Mix::StuckLsbExact:
            for (uint64_t i = 0; i < sus.bits.size(); i += 7) sus.bits[i] |= 1;
            break;
        case Mix::IntStuckLane:
            for (uint64_t r = 0; r < kRows; ++r) at(r, 17) |= 1u << 12;
            break;
        case Mix::SparseFewAnomalies:
            for (uint64_t i : {10u, 5000u, 90000u}) sus.bits[i] ^= 0x00700000;
            break;
    }
    auto res = compare(sus, ref);
    QVERIFY(res.ok());
    const faultline::Signature& s = res->signature;
    QString all = QString::fromStdString(std::string(faultline::signatureKindName(s.kind)) + ": " + s.detail);
    for (const auto& f : s.secondary)
        all += QString::fromStdString("\n  + " + std::string(faultline::signatureKindName(f.kind)) + ": " +
                                      f.detail);
    QVERIFY2(s.kind == kind, qPrintable(all));
    for (const QString& k : secondary.split(',', Qt::SkipEmptyParts)) {
        bool found = false;
        for (const auto& f : s.secondary)
            found |= QString::fromStdString(std::string(faultline::signatureKindName(f.kind))) == k;
        QVERIFY2(found, qPrintable("missing secondary " + k + " in " + all));
    }
    if (mix == Mix::StuckLsbExact) {
        QCOMPARE(*s.evidence.bit, 0u);
        QCOMPARE(*s.evidence.bitValue, 1u);
        QCOMPARE(res->anomalies, uint64_t(0));  // all 1 ulp: rounding-sized
    }
    if (mix == Mix::IntStuckLane) {
        QCOMPARE(*s.evidence.bit, 12u);
        QCOMPARE(s.evidence.field, std::string("value"));
    }
    if (mix == Mix::NanInTile) {
        for (const auto& f : s.secondary)
            if (f.kind == SignatureKind::TileClustered) {
                QCOMPARE(f.evidence.tileRows, uint64_t(32));
                QCOMPARE(f.evidence.tiles, (std::vector<std::pair<uint64_t, uint64_t>>{{4, 8}}));
            }
    }
}

QTEST_APPLESS_MAIN(TestCompareSignature)
#include "test_compare_signature.moc"
