// Sealing and checking evidence bundles (core/evidence): the manifest is what `sha256sum -c`
// accepts, the signature what `minisign -V` accepts, and verifyBundle finds every single-byte
// change, every removed and every added file, in the directory and in the archive, naming it.
#include <QDir>
#include <QFile>
#include <QStandardPaths>
#include <QTemporaryDir>
#include <QtTest>

#include <filesystem>

#include "core/evidence/BundleSealer.h"
#include "core/evidence/BundleVerifier.h"
#include "core/evidence/Manifest.h"
#include "core/evidence/MinisignKey.h"
#include "core/evidence/TarReader.h"
#include "support/TestSupport.h"

using namespace faultline;
using faultline::test::runProcess;

namespace {

void writeFile(const QString& path, const QByteArray& bytes)
{
    QDir().mkpath(QFileInfo(path).absolutePath());
    QFile f(path);
    QVERIFY(f.open(QIODevice::WriteOnly | QIODevice::Truncate));
    QCOMPARE(f.write(bytes), bytes.size());
}

QByteArray readFile(const QString& path)
{
    QFile f(path);
    return f.open(QIODevice::ReadOnly) ? f.readAll() : QByteArray();
}

// Whether some problem names `path`.
bool names(const BundleCheck& c, const std::string& path)
{
    for (const BundleProblem& p : c.problems)
        if (p.path == path) return true;
    return false;
}

std::string problemsText(const BundleCheck& c)
{
    return bundleCheckText(c);
}

}  // namespace

class TestEvidenceBundle : public QObject {
    Q_OBJECT

    QTemporaryDir m_dir;
    QString m_bundle, m_tar, m_pub;
    std::optional<MinisignSecretKey> m_key;

    // The bundle's files, relative to its root, as sealBundle listed them.
    QStringList bundleFiles() const
    {
        QStringList files;
        const std::string manifest = readFile(m_bundle + "/MANIFEST.sha256").toStdString();
        auto entries = parseManifest(manifest, "MANIFEST.sha256");
        if (entries)
            for (const ManifestEntry& e : *entries) files << QString::fromStdString(e.path);
        files << "MANIFEST.sha256"
              << "MANIFEST.sha256.minisig";
        return files;
    }
    BundleCheck check(const QString& what, const QString& pubkey = {}) const
    {
        auto c = verifyBundle(what.toStdString(), pubkey.toStdString());
        if (!c) qFatal("verifyBundle failed: %s", c.message().c_str());
        return *c;
    }

private slots:
    void initTestCase()
    {
        QVERIFY(m_dir.isValid());
        m_bundle = m_dir.filePath("case-17");
        writeFile(m_bundle + "/case.json", "{\"schema_version\": 1}\n");
        writeFile(m_bundle + "/report.md", "# Evidence\n\nGPU 0000:2a:00.0 fails.\n");
        writeFile(m_bundle + "/vendor/nvidia-bug-report.log.gz",
                  QByteArray("\x1f\x8b\x08\x00 binary\x00\xff", 12));
        writeFile(m_bundle + "/health/events.jsonl", "{\"xid\":79}\n{\"xid\":48}\n");
        writeFile(m_bundle + "/reproducer/empty.txt", "");
        auto k = generateMinisignKey();
        QVERIFY(k);
        m_key = *k;
        QVERIFY(writeMinisignKeyPair(*m_key, m_dir.filePath("key").toStdString()));
        m_pub = m_dir.filePath("key.pub");
        SealOptions o;
        o.key = &*m_key;
        o.trustedComment = "faultline evidence case-17";
        auto sealed = sealBundle(m_bundle.toStdString(), o);
        QVERIFY2(sealed, sealed ? "" : sealed.message().c_str());
        QCOMPARE(sealed->files, size_t(6));  // five files and signing-key.pub
        m_tar = QString::fromStdString(sealed->tarPath);
        QCOMPARE(m_tar, m_dir.filePath("case-17.tar"));
    }

    void sealedBundleIsIntact()
    {
        for (const QString& what : {m_bundle, m_tar}) {
            BundleCheck c = check(what, m_pub);
            QVERIFY2(c.intact(), problemsText(c).c_str());
            QCOMPARE(c.filesChecked, size_t(6));
            QCOMPARE(c.signature, BundleCheck::Signature::Valid);
            QCOMPARE(QString::fromStdString(c.trustedComment), QStringLiteral("faultline evidence case-17"));
            BundleCheck own = check(what);
            QVERIFY2(own.intact(), problemsText(own).c_str());
            QCOMPARE(own.signature, BundleCheck::Signature::Valid);
            QVERIFY(!own.notes.empty());  // says the bundle's own key proves integrity only
        }
    }

    void sealingRefusesExistingOutputs()
    {
        auto again = sealBundle(m_bundle.toStdString());
        QVERIFY(!again);
        QVERIFY2(again.message().find("already exists") != std::string::npos, again.message().c_str());
    }

    void sha256sumAcceptsTheManifest()
    {
        const QString sha256sum = QStandardPaths::findExecutable("sha256sum");
        if (sha256sum.isEmpty()) QSKIP("sha256sum is not installed");
        QProcess p;
        p.setWorkingDirectory(m_bundle);
        p.start(sha256sum, {"-c", "--strict", "MANIFEST.sha256"});
        QVERIFY(p.waitForFinished(30000));
        QVERIFY2(p.exitCode() == 0, p.readAllStandardError().constData());
        QCOMPARE(p.readAllStandardOutput().count(": OK\n"), 6);
        writeFile(m_bundle + "/report.md.bak", readFile(m_bundle + "/report.md"));
        QFile::remove(m_bundle + "/report.md");
        p.start(sha256sum, {"-c", "MANIFEST.sha256"});
        QVERIFY(p.waitForFinished(30000));
        QVERIFY(p.exitCode() != 0);
        QVERIFY(QFile::rename(m_bundle + "/report.md.bak", m_bundle + "/report.md"));
    }

    void minisignAcceptsTheSignature()
    {
        const QString minisign = QStandardPaths::findExecutable("minisign");
        if (minisign.isEmpty()) QSKIP("minisign is not installed (scripts/setup-deps installs it)");
        auto r = runProcess(minisign, {"-V", "-p", m_pub, "-m", m_bundle + "/MANIFEST.sha256"});
        QVERIFY2(r.exitCode == 0, r.err.constData());
        QVERIFY(r.out.contains("faultline evidence case-17"));
        // The bundle's own copy of the public key is the same key.
        auto own = runProcess(
            minisign, {"-V", "-p", m_bundle + "/signing-key.pub", "-m", m_bundle + "/MANIFEST.sha256"});
        QCOMPARE(own.exitCode, 0);
    }

    void everySingleByteChangeIsFoundAndNamed()
    {
        for (const QString& rel : bundleFiles()) {
            const QString path = m_bundle + "/" + rel;
            const QByteArray original = readFile(path);
            for (qsizetype i = 0; i < original.size(); ++i) {
                QByteArray changed = original;
                changed[i] = char(changed[i] ^ (i % 2 ? 0x01 : 0x20));
                writeFile(path, changed);
                BundleCheck c = check(m_bundle, m_pub);
                writeFile(path, original);
                QVERIFY2(!c.intact(), qPrintable(QString("byte %1 of %2 changed unnoticed").arg(i).arg(rel)));
                // The manifest's own changes may show as its signature failing; the file is named either way.
                QVERIFY2(
                    names(c, rel.toStdString()) || (rel == "MANIFEST.sha256" && names(c, kSignatureName)),
                    qPrintable(QString("byte %1 of %2: %3").arg(i).arg(rel, problemsText(c).c_str())));
            }
            // An appended byte too.
            writeFile(path, original + "\n");
            BundleCheck c = check(m_bundle, m_pub);
            writeFile(path, original);
            QVERIFY2(!c.intact(), qPrintable(rel));
        }
        QVERIFY(check(m_bundle, m_pub).intact());
    }

    void everyRemovedFileIsNamed()
    {
        for (const QString& rel : bundleFiles()) {
            const QString path = m_bundle + "/" + rel;
            const QByteArray original = readFile(path);
            QVERIFY(QFile::remove(path));
            BundleCheck c = check(m_bundle, m_pub);
            writeFile(path, original);
            QVERIFY2(!c.intact(), qPrintable(rel));
            QVERIFY2(names(c, rel.toStdString()), problemsText(c).c_str());
        }
        QVERIFY(check(m_bundle, m_pub).intact());
    }

    void addedFilesAndFoldersAreNamed()
    {
        for (const QString& rel :
             {QString("extra.txt"), QString("vendor/dcgm-diag.txt"), QString(".hidden")}) {
            writeFile(m_bundle + "/" + rel, "x");
            BundleCheck c = check(m_bundle, m_pub);
            QFile::remove(m_bundle + "/" + rel);
            QVERIFY2(names(c, rel.toStdString()), problemsText(c).c_str());
        }
        QVERIFY(QDir(m_bundle).mkdir("empty"));
        BundleCheck c = check(m_bundle, m_pub);
        QDir(m_bundle).rmdir("empty");
        QVERIFY2(names(c, "empty/"), problemsText(c).c_str());
        std::filesystem::create_symlink("report.md", (m_bundle + "/link.md").toStdString());
        BundleCheck l = check(m_bundle, m_pub);
        QFile::remove(m_bundle + "/link.md");
        QVERIFY2(names(l, "link.md"), problemsText(l).c_str());
        QVERIFY(check(m_bundle, m_pub).intact());
    }

    void everySingleByteChangeOfTheArchiveIsFound()
    {
        const QByteArray original = readFile(m_tar);
        QVERIFY(original.size() > 0 && original.size() % 512 == 0);
        const QString copy = m_dir.filePath("changed.tar");
        for (qsizetype i = 0; i < original.size(); ++i) {
            QByteArray changed = original;
            changed[i] = char(changed[i] ^ 0x04);
            writeFile(copy, changed);
            auto c = verifyBundle(copy.toStdString(), m_pub.toStdString());
            // A damaged ustar magic of the first header makes it no archive at all: an error;
            // any other change is a bundle that is not intact.
            const bool magic = i >= 257 && i < 262;
            QVERIFY2(magic ? !c : (c && !c->intact()),
                     qPrintable(QString("archive byte %1 changed unnoticed").arg(i)));
        }
        writeFile(copy, original + QByteArray(512, 'x'));
        auto trailing = verifyBundle(copy.toStdString(), m_pub.toStdString());
        QVERIFY(trailing && !trailing->intact());
        writeFile(copy, original.left(original.size() - 1024 - 512));
        auto cut = verifyBundle(copy.toStdString(), m_pub.toStdString());
        QVERIFY(cut && !cut->intact());
    }

    void wrongKeyAndTamperedSignatureAreRejected()
    {
        auto other = generateMinisignKey();
        QVERIFY(other);
        QVERIFY(writeMinisignKeyPair(*other, m_dir.filePath("other").toStdString()));
        BundleCheck c = check(m_bundle, m_dir.filePath("other.pub"));
        QVERIFY(!c.intact());
        QCOMPARE(c.signature, BundleCheck::Signature::Invalid);
        QVERIFY(names(c, kSignatureName));
        // A bad public key file is an error naming it.
        writeFile(m_dir.filePath("bad.pub"), "not a key\n");
        auto bad = verifyBundle(m_bundle.toStdString(), m_dir.filePath("bad.pub").toStdString());
        QVERIFY(!bad);
        QVERIFY2(bad.message().find("bad.pub") != std::string::npos, bad.message().c_str());
        auto missing = verifyBundle(m_dir.filePath("nope").toStdString());
        QVERIFY(!missing);
        QVERIFY(missing.message().find("nope") != std::string::npos);
    }

    void unsignedBundles()
    {
        const QString dir = m_dir.filePath("unsigned");
        writeFile(dir + "/case.json", "{}\n");
        auto sealed = sealBundle(dir.toStdString());
        QVERIFY(sealed);
        BundleCheck c = check(dir);
        QVERIFY2(c.intact(), problemsText(c).c_str());
        QCOMPARE(c.signature, BundleCheck::Signature::None);
        BundleCheck withKey = check(dir, m_pub);
        QVERIFY(!withKey.intact());
        QVERIFY(names(withKey, kSignatureName));
    }

    void manifestFormIsStrict_data()
    {
        QTest::addColumn<QByteArray>("text");
        const QByteArray h(64, 'a');
        QTest::newRow("ok") << QByteArray("SHA256 (a) = " + h + "\n");
        QTest::newRow("upper hex") << QByteArray("SHA256 (a) = " + h.toUpper() + "\n");
        QTest::newRow("no newline") << QByteArray("SHA256 (a) = " + h);
        QTest::newRow("unsorted") << QByteArray("SHA256 (b) = " + h + "\nSHA256 (a) = " + h + "\n");
        QTest::newRow("dotdot") << QByteArray("SHA256 (../a) = " + h + "\n");
        QTest::newRow("absolute") << QByteArray("SHA256 (/a) = " + h + "\n");
        QTest::newRow("gnu form") << QByteArray(h + "  a\n");
        QTest::newRow("twice") << QByteArray("SHA256 (a) = " + h + "\nSHA256 (a) = " + h + "\n");
    }
    void manifestFormIsStrict()
    {
        QFETCH(QByteArray, text);
        auto m = parseManifest(text.toStdString(), "M");
        QCOMPARE(bool(m), QByteArray(QTest::currentDataTag()) == "ok");
        if (m)
            QCOMPARE(QByteArray::fromStdString(formatManifest(*m)), text);
        else
            QVERIFY2(m.message().rfind("M", 0) == 0, m.message().c_str());
    }
};

QTEST_GUILESS_MAIN(TestEvidenceBundle)
#include "test_evidence_bundle.moc"
