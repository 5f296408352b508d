// Pairing of two files' tensors (core/compare/Pairing.h): by name, prefix strip/add on either
// side, group vs group, unpaired tensors, dtype/shape mismatches (not comparable) and duplicate
// keys (errors) reported per tensor.
#include <QtTest>

#include "core/compare/Pairing.h"

using faultline::DType;
using faultline::PairingOptions;
using faultline::TensorInfo;

namespace {

TensorInfo info(const std::string& name, DType t = DType::Float32, std::vector<uint64_t> shape = {4, 4})
{
    TensorInfo i;
    i.name = name;
    i.dtype = t;
    i.shape = std::move(shape);
    return i;
}

// "key:s:r" per pair, for compact comparisons.
QStringList describe(const faultline::Pairing& p)
{
    QStringList out;
    for (const auto& pr : p.pairs)
        out << QString("%1:%2:%3")
                   .arg(QString::fromStdString(pr.key))
                   .arg(pr.suspectIndex)
                   .arg(pr.referenceIndex);
    return out;
}

QStringList unpaired(const faultline::Pairing& p)
{
    QStringList out;
    for (const auto& u : p.unpaired) out << QString::fromStdString(u.side + ":" + u.name);
    return out;
}

}  // namespace

class TestComparePairing : public QObject {
    Q_OBJECT

private slots:
    void byName();
    void stripPrefix();
    void addPrefix();
    void groupVsGroup();
    void mismatchesAreNotComparable();
    void duplicateKeys();
    void keyFunction_data();
    void keyFunction();
};

void TestComparePairing::byName()
{
    const std::vector<TensorInfo> s = {info("a"), info("b"), info("c")};
    const std::vector<TensorInfo> r = {info("c"), info("a"), info("d")};
    auto p = faultline::pairTensors(s, r);
    QCOMPARE(describe(p), QStringList({"a:0:1", "c:2:0"}));
    QCOMPARE(unpaired(p), QStringList({"suspect:b", "reference:d"}));
    QVERIFY(p.errors.empty());
}

void TestComparePairing::stripPrefix()
{
    // DDP saves "module.x"; the reference has plain names.
    const std::vector<TensorInfo> s = {info("module.layer.w"), info("module.layer.b"), info("extra")};
    const std::vector<TensorInfo> r = {info("layer.w"), info("layer.b")};
    PairingOptions o;
    o.suspect.strip = "module.";
    auto p = faultline::pairTensors(s, r, o);
    QCOMPARE(describe(p), QStringList({"layer.w:0:0", "layer.b:1:1"}));
    QCOMPARE(unpaired(p), QStringList({"suspect:extra"}));
}

void TestComparePairing::addPrefix()
{
    const std::vector<TensorInfo> s = {info("w")};
    const std::vector<TensorInfo> r = {info("model.w")};
    PairingOptions o;
    o.suspect.add = "model.";
    auto p = faultline::pairTensors(s, r, o);
    QCOMPARE(describe(p), QStringList({"model.w:0:0"}));
    // The same by stripping on the other side instead.
    PairingOptions o2;
    o2.reference.strip = "model.";
    QCOMPARE(describe(faultline::pairTensors(s, r, o2)), QStringList({"w:0:0"}));
}

void TestComparePairing::groupVsGroup()
{
    // One file holding both devices' outputs: compare suspect/ against healthy/.
    const std::vector<TensorInfo> all = {info("suspect/x"), info("suspect/y"), info("healthy/x"),
                                         info("healthy/y"), info("healthy/z"), info("inputs/a")};
    PairingOptions o;
    o.suspect.group = "suspect/";
    o.reference.group = "healthy/";
    auto p = faultline::pairTensors(all, all, o);
    QCOMPARE(describe(p), QStringList({"x:0:2", "y:1:3"}));
    // Tensors outside the groups are ignored, not unpaired.
    QCOMPARE(unpaired(p), QStringList({"reference:healthy/z"}));
}

void TestComparePairing::mismatchesAreNotComparable()
{
    const std::vector<TensorInfo> s = {info("a"), info("b", DType::BFloat16),
                                       info("c", DType::Float32, {4, 5}), info("d", DType::Float16, {2}),
                                       info("e")};
    const std::vector<TensorInfo> r = {info("a"), info("b", DType::Float32),
                                       info("c", DType::Float32, {5, 4}), info("d", DType::Float32, {3}),
                                       info("e")};
    auto p = faultline::pairTensors(s, r);
    QCOMPARE(describe(p), QStringList({"a:0:0", "e:4:4"}));  // the rest goes on
    QCOMPARE(p.mismatched.size(), size_t(3));
    QCOMPARE(p.mismatched[0].name, std::string("b"));
    QVERIFY(QString::fromStdString(p.mismatched[0].message)
                .contains("dtype bfloat16 (suspect) vs float32 (reference)"));
    QVERIFY(QString::fromStdString(p.mismatched[0].message).contains("meaningless"));
    QCOMPARE(p.mismatched[1].name, std::string("c"));
    QVERIFY(QString::fromStdString(p.mismatched[1].message)
                .contains("shape [4, 5] (suspect) vs [5, 4] (reference)"));
    QCOMPARE(p.mismatched[2].name, std::string("d"));
    QVERIFY(QString::fromStdString(p.mismatched[2].message).contains("dtype"));
    QVERIFY(QString::fromStdString(p.mismatched[2].message).contains("shape"));
    QVERIFY(p.unpaired.empty());
    QVERIFY(p.errors.empty());  // errors are keys taken twice
}

void TestComparePairing::duplicateKeys()
{
    // Stripping makes "module.w" and "w" collide on the suspect side.
    const std::vector<TensorInfo> s = {info("module.w"), info("w")};
    const std::vector<TensorInfo> r = {info("w"), info("x"), info("model.x")};
    PairingOptions o;
    o.suspect.strip = "module.";
    o.reference.strip = "model.";
    auto p = faultline::pairTensors(s, r, o);
    QCOMPARE(describe(p), QStringList({"w:0:0"}));
    QCOMPARE(p.errors.size(), size_t(2));
    QVERIFY(QString::fromStdString(p.errors[0].message).contains("suspect tensor 'w'"));
    QVERIFY(QString::fromStdString(p.errors[1].message).contains("reference tensor 'model.x'"));
    QCOMPARE(unpaired(p), QStringList({"reference:x"}));
}

void TestComparePairing::keyFunction_data()
{
    QTest::addColumn<QString>("name");
    QTest::addColumn<QString>("group");
    QTest::addColumn<QString>("strip");
    QTest::addColumn<QString>("add");
    QTest::addColumn<bool>("included");
    QTest::addColumn<QString>("key");
    QTest::newRow("plain") << "a/b"
                           << ""
                           << ""
                           << "" << true << "a/b";
    QTest::newRow("strip present") << "module.a"
                                   << ""
                                   << "module."
                                   << "" << true << "a";
    QTest::newRow("strip absent") << "a"
                                  << ""
                                  << "module."
                                  << "" << true << "a";
    QTest::newRow("strip only prefix") << "x.module.a"
                                       << ""
                                       << "module."
                                       << "" << true << "x.module.a";
    QTest::newRow("group") << "dev0/a"
                           << "dev0/"
                           << ""
                           << "" << true << "a";
    QTest::newRow("outside group") << "dev1/a"
                                   << "dev0/"
                                   << ""
                                   << "" << false << "";
    QTest::newRow("all three") << "g/module.a"
                               << "g/"
                               << "module."
                               << "model." << true << "model.a";
}

void TestComparePairing::keyFunction()
{
    QFETCH(QString, name);
    QFETCH(QString, group);
    QFETCH(QString, strip);
    QFETCH(QString, add);
    QFETCH(bool, included);
    QFETCH(QString, key);
    faultline::PairingSide side{group.toStdString(), strip.toStdString(), add.toStdString()};
    bool inc = !included;
    QCOMPARE(QString::fromStdString(faultline::pairingKey(name.toStdString(), side, &inc)), key);
    QCOMPARE(inc, included);
}

QTEST_APPLESS_MAIN(TestComparePairing)
#include "test_compare_pairing.moc"
