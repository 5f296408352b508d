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
    void axes_data();
    void axes();
    void axisNames();
    void maxErrorWithNonFinite();
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
    // The kind is the one its two axes name.
    QCOMPARE(s.kind, faultline::signatureKindFor(s.what, s.where));

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

namespace {

// The cases a new user tried (issue #13), on values a stuck-bit reading would fit: magnitudes in
// [0.25, 2), so writing a NaN/Inf sets the exponent's top bit 0 -> 1 in every element it hits.
enum class Axes { NanScattered, NanRow, ExponentFlips, Unrelated30, FixedBitNoRoom, StuckColumn, OneElement };

}  // namespace

Q_DECLARE_METATYPE(Axes)
Q_DECLARE_METATYPE(faultline::SignatureWhat)
Q_DECLARE_METATYPE(faultline::SignatureWhere)

void TestCompareSignature::axes_data()
{
    using faultline::SignatureWhat;
    using faultline::SignatureWhere;
    QTest::addColumn<DType>("dtype");
    QTest::addColumn<Axes>("axes");
    QTest::addColumn<SignatureKind>("kind");
    QTest::addColumn<SignatureWhat>("what");
    QTest::addColumn<SignatureWhere>("where");
    QTest::addColumn<QString>("notPrimary");  // a kind that must not be the primary one
    for (auto [t, name] :
         {std::pair{DType::Float32, "f32"}, {DType::BFloat16, "bf16"}, {DType::Float16, "f16"}}) {
        auto row = [&](const char* what) {
            return &QTest::newRow(qPrintable(QString("%1 %2").arg(name, what)));
        };
        *row("nan/inf scattered") << t << Axes::NanScattered << SignatureKind::NanInf << SignatureWhat::NanInf
                                  << SignatureWhere::Scattered << "stuck_bit";
        *row("nan row") << t << Axes::NanRow << SignatureKind::NanInf << SignatureWhat::NanInf
                        << SignatureWhere::RowStripe << "stuck_bit";
        *row("exponent flips") << t << Axes::ExponentFlips << SignatureKind::Exponent
                               << SignatureWhat::Exponent << SignatureWhere::Scattered << "single_bit_random";
        *row("30% unrelated") << t << Axes::Unrelated30 << SignatureKind::Widespread
                              << SignatureWhat::MultiBit << SignatureWhere::Widespread << "exponent";
        *row("fixed bit, no room") << t << Axes::FixedBitNoRoom << SignatureKind::Exponent
                                   << SignatureWhat::Exponent << SignatureWhere::Scattered << "stuck_bit";
        *row("stuck column") << t << Axes::StuckColumn << SignatureKind::StuckBit << SignatureWhat::StuckBit
                             << SignatureWhere::ColumnStripe << "";
        *row("one element") << t << Axes::OneElement << SignatureKind::SignFlip << SignatureWhat::Sign
                            << SignatureWhere::Element << "";
    }
}

void TestCompareSignature::axes()
{
    QFETCH(DType, dtype);
    QFETCH(Axes, axes);
    QFETCH(SignatureKind, kind);
    QFETCH(faultline::SignatureWhat, what);
    QFETCH(faultline::SignatureWhere, where);
    QFETCH(QString, notPrimary);
    Tensor ref = randomTensor(dtype, {kRows, kCols}, 21, true);
    for (auto& b : ref.bits)
        if (decode(dtype, b) >= 2.0) b = encode(dtype, decode(dtype, b) / 2);
    Tensor sus = ref;
    addRoundingNoise(sus, 0.3, 22);
    std::mt19937_64 rng(23);
    const auto layout = faultline::bitLayout(dtype);
    const uint64_t n = kRows * kCols;
    switch (axes) {
        case Axes::NanScattered:
            for (int k = 0; k < 60; ++k)
                sus.bits[rng() % n] = encode(dtype, k % 3 == 2 ? INFINITY : std::nan(""));
            break;
        case Axes::NanRow:
            for (uint64_t c = 0; c < kCols; ++c)
                sus.bits[size_t(17 * kCols + c)] = encode(dtype, std::nan(""));
            break;
        case Axes::ExponentFlips:
            // One bit each, at random exponent positions below the field's top (values stay finite).
            for (int k = 0; k < 150; ++k) {
                const size_t i = rng() % n;
                sus.bits[i] =
                    ref.bits[i] ^ (uint64_t(1) << (layout.mantissaBits + rng() % (layout.exponentBits - 1)));
            }
            break;
        case Axes::Unrelated30: {
            std::uniform_real_distribution<double> u(0, 1);
            for (auto& b : sus.bits)
                if (u(rng) < 0.3) b = encode(dtype, u(rng) * 8.0 - 4.0);
            break;
        }
        case Axes::FixedBitNoRoom:
            // XOR of the exponent's second-highest bit at random elements: every value here holds
            // it at 1, so all flips go 1 -> 0, yet no unit is stuck.
            for (int k = 0; k < 120; ++k) {
                const size_t i = rng() % n;
                sus.bits[i] = ref.bits[i] ^ (uint64_t(1) << (layout.totalBits - 3));
            }
            break;
        case Axes::StuckColumn:
            for (uint64_t r = 0; r < kRows; ++r)
                sus.bits[size_t(r * kCols + 300)] |= uint64_t(1) << (layout.mantissaBits - 1);
            break;
        case Axes::OneElement:
            sus.bits[4242] ^= uint64_t(1) << (layout.totalBits - 1);
            break;
    }
    faultline::CompareOptions opt;
    opt.tolerance = *faultline::parseTolerance("ulp:2");
    auto res = compare(sus, ref, opt);
    QVERIFY(res.ok());
    const faultline::Signature& s = res->signature;
    const QString all =
        QString::fromStdString(std::string(faultline::signatureKindName(s.kind)) + " (" +
                               std::string(faultline::signatureWhatName(s.what)) + "/" +
                               std::string(faultline::signatureWhereName(s.where)) + "): " + s.detail);
    QVERIFY2(s.kind == kind, qPrintable(all));
    QVERIFY2(s.what == what, qPrintable(all));
    QVERIFY2(s.where == where, qPrintable(all));
    if (!notPrimary.isEmpty())
        QVERIFY(QString::fromUtf8(faultline::signatureKindName(s.kind).data()) != notPrimary);
}

void TestCompareSignature::axisNames()
{
    using faultline::SignatureWhat;
    using faultline::SignatureWhere;
    const char* whats[] = {"none",      "rounding",  "nan_inf",    "sign",     "exponent",
                           "stuck_bit", "fixed_bit", "random_bit", "multi_bit"};
    for (size_t i = 0; i < std::size(whats); ++i) {
        QCOMPARE(std::string(faultline::signatureWhatName(SignatureWhat(i))), std::string(whats[i]));
        QCOMPARE(*faultline::parseSignatureWhat(whats[i]), SignatureWhat(i));
    }
    const char* wheres[] = {"none",          "element",  "tile",      "row_stripe", "column_stripe",
                            "address_range", "periodic", "scattered", "widespread"};
    for (size_t i = 0; i < std::size(wheres); ++i) {
        QCOMPARE(std::string(faultline::signatureWhereName(SignatureWhere(i))), std::string(wheres[i]));
        QCOMPARE(*faultline::parseSignatureWhere(wheres[i]), SignatureWhere(i));
    }
    QVERIFY(!faultline::parseSignatureWhat("stuck").has_value());
    QVERIFY(!faultline::parseSignatureWhere("tiles").has_value());
    // The precedence of signatureKindFor (SignatureAxes.h).
    QCOMPARE(faultline::signatureKindFor(SignatureWhat::NanInf, SignatureWhere::Tile), SignatureKind::NanInf);
    QCOMPARE(faultline::signatureKindFor(SignatureWhat::StuckBit, SignatureWhere::Tile),
             SignatureKind::StuckBit);
    QCOMPARE(faultline::signatureKindFor(SignatureWhat::Exponent, SignatureWhere::Tile),
             SignatureKind::TileClustered);
    QCOMPARE(faultline::signatureKindFor(SignatureWhat::MultiBit, SignatureWhere::Periodic),
             SignatureKind::AddressRange);
    QCOMPARE(faultline::signatureKindFor(SignatureWhat::FixedBit, SignatureWhere::Widespread),
             SignatureKind::SingleBitRandom);
    QCOMPARE(faultline::signatureKindFor(SignatureWhat::MultiBit, SignatureWhere::Widespread),
             SignatureKind::Widespread);
    QCOMPARE(faultline::signatureKindFor(SignatureWhat::MultiBit, SignatureWhere::Element),
             SignatureKind::Scattered);
}

void TestCompareSignature::maxErrorWithNonFinite()
{
    // NaNs only: the finite maxima are 0, and the text must not read as "no error".
    Tensor ref = randomTensor(DType::Float32, {64, 64}, 5);
    Tensor sus = ref;
    for (size_t i : {3u, 700u, 2000u}) sus.bits[i] = 0x7fc00000;
    auto only = compare(sus, ref);
    QVERIFY(only.ok());
    QCOMPARE(only->absError.max, 0.0);
    QCOMPARE(faultline::maxErrorText(*only), std::string("no finite element differs; 3 NaN/Inf introduced"));
    // NaNs next to a finite error: the maximum is said to be over finite pairs.
    sus.bits[100] ^= 0x00400000;
    auto both = compare(sus, ref);
    QVERIFY(both.ok());
    const std::string text = faultline::maxErrorText(*both);
    QVERIFY2(text.find("among finite pairs; 3 NaN/Inf introduced") != std::string::npos, text.c_str());
    QVERIFY2(text.rfind("max |err| ", 0) == 0, text.c_str());
    // No NaN/Inf: the plain figures.
    sus.bits[3] = ref.bits[3];
    sus.bits[700] = ref.bits[700];
    sus.bits[2000] = ref.bits[2000];
    auto finite = compare(sus, ref);
    QVERIFY(finite.ok());
    QVERIFY2(faultline::maxErrorText(*finite).find("NaN") == std::string::npos,
             faultline::maxErrorText(*finite).c_str());
}

QTEST_APPLESS_MAIN(TestCompareSignature)
#include "test_compare_signature.moc"
