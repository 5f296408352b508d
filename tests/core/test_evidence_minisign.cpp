// minisign keys and signatures (core/evidence): round trips, tampering, malformed files, and
// interoperation with Debian's minisign in both directions (skipped where it is not installed).
#include <QFile>
#include <QProcess>
#include <QStandardPaths>
#include <QTemporaryDir>
#include <QtTest>

#include "core/Base64.h"
#include "core/evidence/MessageDigest.h"
#include "core/evidence/MinisignKey.h"
#include "core/evidence/MinisignSignature.h"
#include "support/TestSupport.h"

using namespace faultline;
using faultline::test::runProcess;

namespace {

void writeFile(const QString& path, const QByteArray& bytes)
{
    QFile f(path);
    QVERIFY(f.open(QIODevice::WriteOnly | QIODevice::Truncate));
    QCOMPARE(f.write(bytes), bytes.size());
}

QByteArray readFile(const QString& path)
{
    QFile f(path);
    return f.open(QIODevice::ReadOnly) ? f.readAll() : QByteArray();
}

}  // namespace

class TestEvidenceMinisign : public QObject {
    Q_OBJECT

    QTemporaryDir m_dir;
    QString path(const QString& name) const { return m_dir.filePath(name); }
    static QString minisign() { return QStandardPaths::findExecutable(QStringLiteral("minisign")); }

private slots:
    void digestsMatchKnownVectors()
    {
        // FIPS 180-2 and RFC 7693 test vectors for "abc".
        QCOMPARE(QString::fromStdString(toHex(Sha256::of("abc"))),
                 QStringLiteral("ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"));
        const Blake2b512Digest b = Blake2b512::of("abc");
        QCOMPARE(QString::fromStdString(toHex(b.data(), b.size())).left(32),
                 QStringLiteral("ba80a53f981c4d0d6a2797b69f12f6e9"));
    }

    void base64IsCanonical()
    {
        const uint8_t bytes[] = {0xde, 0xad, 0xbe, 0xef};
        const std::string enc = base64Encode(bytes, 4);
        QCOMPARE(QString::fromStdString(enc), QStringLiteral("3q2+7w=="));
        auto dec = base64Decode(enc);
        QVERIFY(dec && dec->size() == 4 && (*dec)[3] == 0xef);
        QVERIFY(!base64Decode("3q2+7x=="));  // same bytes, non-zero unused bits
        QVERIFY(!base64Decode("3q2+7w="));
        QVERIFY(!base64Decode("3q2*7w=="));
        QVERIFY(!base64Decode(""));
    }

    void keyFilesRoundTrip()
    {
        auto k = generateMinisignKey();
        QVERIFY2(k, k ? "" : k.message().c_str());
        const std::string pubText = formatMinisignPublicKey(k->publicPart());
        QVERIFY(pubText.rfind("untrusted comment: minisign public key " + k->publicPart().keyIdText() + "\n",
                              0) == 0);
        auto pub = parseMinisignPublicKey(pubText, "KEY.pub");
        QVERIFY(pub);
        QVERIFY(pub->keyId == k->keyId && pub->key == k->publicKey);
        auto sec = parseMinisignSecretKey(formatMinisignSecretKey(*k), "KEY");
        QVERIFY2(sec, sec ? "" : sec.message().c_str());
        QVERIFY(sec->seed == k->seed && sec->keyId == k->keyId);
        // The key id prints as minisign does: the bytes as a little-endian number.
        MinisignPublicKey id{{0x49, 0x90, 0xda, 0x0e, 0xec, 0x2b, 0xb0, 0x89}, {}};
        QCOMPARE(QString::fromStdString(id.keyIdText()), QStringLiteral("89B02BEC0EDA9049"));
    }

    void signAndVerify()
    {
        auto k = generateMinisignKey();
        QVERIFY(k);
        const std::string msg = "SHA256 (case.json) = 00\n";
        auto sig = signMinisign(*k, msg, "timestamp:1\tfile:MANIFEST.sha256\thashed");
        QVERIFY(sig);
        QVERIFY(sig->prehashed);
        auto parsed = parseMinisignSignature(formatMinisignSignature(*sig), "S");
        QVERIFY(parsed);
        QCOMPARE(QString::fromStdString(minisignVerifyProblem(k->publicPart(), *parsed, msg)), QString());
        QVERIFY(!minisignVerifyProblem(k->publicPart(), *parsed, msg + "x").empty());
        MinisignSignature comment = *parsed;
        comment.trustedComment += "!";
        QVERIFY(minisignVerifyProblem(k->publicPart(), comment, msg).find("trusted comment") !=
                std::string::npos);
        auto other = generateMinisignKey();
        QVERIFY(other);
        QVERIFY(minisignVerifyProblem(other->publicPart(), *parsed, msg).find("not by key") !=
                std::string::npos);
        MinisignPublicKey sameIdOtherKey = other->publicPart();
        sameIdOtherKey.keyId = k->keyId;
        QVERIFY(minisignVerifyProblem(sameIdOtherKey, *parsed, msg).find("does not match") !=
                std::string::npos);
    }

    void malformedFilesAreNamedErrors_data()
    {
        QTest::addColumn<QByteArray>("text");
        QTest::addColumn<QString>("expected");
        QTest::newRow("empty") << QByteArray() << "not a minisign key file";
        QTest::newRow("no comment") << QByteArray("RWQAAA==\n") << "not a minisign key file";
        QTest::newRow("no key") << QByteArray("untrusted comment: x\n") << "no key";
        QTest::newRow("bad base64") << QByteArray("untrusted comment: x\n!!!!\n") << "not a minisign";
        QTest::newRow("short") << QByteArray("untrusted comment: x\nRWQAAA==\n") << "not a minisign";
    }
    void malformedFilesAreNamedErrors()
    {
        QFETCH(QByteArray, text);
        QFETCH(QString, expected);
        auto pub = parseMinisignPublicKey(text.toStdString(), "/keys/KEY.pub");
        QVERIFY(!pub);
        QVERIFY2(pub.message().rfind("/keys/KEY.pub", 0) == 0, pub.message().c_str());
        QVERIFY2(QString::fromStdString(pub.message()).contains(expected), pub.message().c_str());
        auto sec = parseMinisignSecretKey(text.toStdString(), "/keys/KEY");
        QVERIFY(!sec);
        QVERIFY2(sec.message().rfind("/keys/KEY", 0) == 0, sec.message().c_str());
        QVERIFY(!readMinisignSecretKey(path("does-not-exist").toStdString()));
    }

    void encryptedAndDamagedSecretKeysAreRefused()
    {
        auto k = generateMinisignKey();
        QVERIFY(k);
        std::string text = formatMinisignSecretKey(*k);
        const size_t nl = text.find('\n');
        auto bytes = *base64Decode(text.substr(nl + 1, text.size() - nl - 2));
        std::vector<uint8_t> encrypted = bytes;
        encrypted[2] = 'S';
        encrypted[3] = 'c';
        auto e = parseMinisignSecretKey(
            text.substr(0, nl + 1) + base64Encode(encrypted.data(), encrypted.size()) + "\n", "K");
        QVERIFY(!e);
        QVERIFY2(e.message().find("encrypted") != std::string::npos, e.message().c_str());
        std::vector<uint8_t> damaged = bytes;
        damaged[70] ^= 1;  // inside the seed: no longer the public half's
        auto d = parseMinisignSecretKey(
            text.substr(0, nl + 1) + base64Encode(damaged.data(), damaged.size()) + "\n", "K");
        QVERIFY(!d);
        QVERIFY2(d.message().find("damaged") != std::string::npos, d.message().c_str());
    }

    void keyPairFilesAreNotOverwritten()
    {
        auto k = generateMinisignKey();
        QVERIFY(k);
        const std::string key = path("pair").toStdString();
        QVERIFY(writeMinisignKeyPair(*k, key));
        QVERIFY(QFile::exists(path("pair.pub")));
        QCOMPARE(QFile(path("pair")).permissions() & (QFile::ReadGroup | QFile::ReadOther),
                 QFile::Permissions());
        const QByteArray before = readFile(path("pair"));
        Status again = writeMinisignKeyPair(*k, key);
        QVERIFY(!again);
        QVERIFY2(again.message().find("already exists") != std::string::npos, again.message().c_str());
        QCOMPARE(readFile(path("pair")), before);
    }

    void debianMinisignVerifiesOurSignatures()
    {
        if (minisign().isEmpty()) QSKIP("minisign is not installed (scripts/setup-deps installs it)");
        auto k = generateMinisignKey();
        QVERIFY(k);
        QVERIFY(writeMinisignKeyPair(*k, path("ours").toStdString()));
        const QByteArray msg = "SHA256 (report.md) = 1234\n";
        writeFile(path("msg"), msg);
        auto sig = signMinisign(*k, msg.toStdString(), "timestamp:1700000000\tfile:msg\thashed");
        QVERIFY(sig);
        writeFile(path("msg.minisig"), QByteArray::fromStdString(formatMinisignSignature(*sig)));
        auto ok = runProcess(minisign(), {"-V", "-p", path("ours.pub"), "-m", path("msg")});
        QVERIFY2(ok.exitCode == 0, ok.err.constData());
        QVERIFY(ok.out.contains("timestamp:1700000000"));
        writeFile(path("msg"), msg + "x");
        auto bad = runProcess(minisign(), {"-V", "-p", path("ours.pub"), "-m", path("msg")});
        QVERIFY(bad.exitCode != 0);
        // Our unencrypted secret key signs with minisign too.
        writeFile(path("msg2"), msg);
        auto sign = runProcess(minisign(), {"-S", "-s", path("ours"), "-m", path("msg2")});
        QVERIFY2(sign.exitCode == 0, sign.err.constData());
        auto theirs = parseMinisignSignature(readFile(path("msg2.minisig")).toStdString(), "msg2.minisig");
        QVERIFY2(theirs, theirs ? "" : theirs.message().c_str());
        QCOMPARE(QString::fromStdString(minisignVerifyProblem(k->publicPart(), *theirs, msg.toStdString())),
                 QString());
    }

    void passwordEncryptedMinisignKeysDecrypt()
    {
        if (minisign().isEmpty()) QSKIP("minisign is not installed (scripts/setup-deps installs it)");
        QProcess gen;
        gen.start(minisign(), {"-G", "-p", path("enc.pub"), "-s", path("enc.key")});
        QVERIFY(gen.waitForStarted());
        gen.write("hunter2\nhunter2\n");
        gen.closeWriteChannel();
        QVERIFY(gen.waitForFinished(120000));
        QVERIFY2(gen.exitCode() == 0, gen.readAllStandardError().constData());
        QVERIFY(isEncryptedMinisignSecretKey(path("enc.key").toStdString()));
        auto pub = readMinisignPublicKey(path("enc.pub").toStdString());
        QVERIFY(pub);
        const std::string right = "hunter2", wrong = "hunter3";
        auto sec = readMinisignSecretKey(path("enc.key").toStdString(), &right);
        QVERIFY2(sec, sec ? "" : sec.message().c_str());
        QVERIFY(sec->publicKey == pub->key && sec->keyId == pub->keyId);
        auto bad = readMinisignSecretKey(path("enc.key").toStdString(), &wrong);
        QVERIFY(!bad);
        QVERIFY2(bad.message().find("wrong password") != std::string::npos, bad.message().c_str());
        QVERIFY(!readMinisignSecretKey(path("enc.key").toStdString()));  // no password given
        // What we sign with the decrypted key, minisign verifies.
        const QByteArray msg = "SHA256 (x) = 00\n";
        auto sig = signMinisign(*sec, msg.toStdString(), "encrypted key");
        QVERIFY(sig);
        writeFile(path("e"), msg);
        writeFile(path("e.minisig"), QByteArray::fromStdString(formatMinisignSignature(*sig)));
        auto ok = runProcess(minisign(), {"-V", "-p", path("enc.pub"), "-m", path("e")});
        QVERIFY2(ok.exitCode == 0, ok.err.constData());
        QVERIFY(!isEncryptedMinisignSecretKey(path("does-not-exist").toStdString()));
    }

    void weVerifyDebianMinisignSignatures()
    {
        if (minisign().isEmpty()) QSKIP("minisign is not installed (scripts/setup-deps installs it)");
        auto gen = runProcess(minisign(), {"-G", "-W", "-p", path("theirs.pub"), "-s", path("theirs.key")});
        QVERIFY2(gen.exitCode == 0, gen.err.constData());
        auto pub = readMinisignPublicKey(path("theirs.pub").toStdString());
        QVERIFY2(pub, pub ? "" : pub.message().c_str());
        auto sec = readMinisignSecretKey(path("theirs.key").toStdString());
        QVERIFY2(sec, sec ? "" : sec.message().c_str());
        QVERIFY(sec->publicKey == pub->key && sec->keyId == pub->keyId);
        const QByteArray msg = "SHA256 (case.json) = abcd\n";
        for (const QStringList& extra : {QStringList{}, QStringList{"-l"}}) {
            writeFile(path("m"), msg);
            QFile::remove(path("m.minisig"));
            auto sign = runProcess(
                minisign(),
                QStringList{"-S", "-s", path("theirs.key"), "-m", path("m"), "-t", "case 7"} + extra);
            if (sign.exitCode != 0 && !extra.isEmpty()) continue;  // a minisign without legacy signing
            QVERIFY2(sign.exitCode == 0, sign.err.constData());
            auto sig = parseMinisignSignature(readFile(path("m.minisig")).toStdString(), "m.minisig");
            QVERIFY2(sig, sig ? "" : sig.message().c_str());
            QCOMPARE(sig->prehashed, extra.isEmpty());
            QCOMPARE(QString::fromStdString(sig->trustedComment), QStringLiteral("case 7"));
            QCOMPARE(QString::fromStdString(minisignVerifyProblem(*pub, *sig, msg.toStdString())), QString());
            QVERIFY(!minisignVerifyProblem(*pub, *sig, (msg + "y").toStdString()).empty());
        }
        // And minisign verifies what we sign with its key.
        auto ours = signMinisign(*sec, msg.toStdString(), "ours");
        QVERIFY(ours);
        writeFile(path("m"), msg);
        writeFile(path("m.minisig"), QByteArray::fromStdString(formatMinisignSignature(*ours)));
        auto ok = runProcess(minisign(), {"-V", "-p", path("theirs.pub"), "-m", path("m")});
        QVERIFY2(ok.exitCode == 0, ok.err.constData());
    }
};

QTEST_GUILESS_MAIN(TestEvidenceMinisign)
#include "test_evidence_minisign.moc"
