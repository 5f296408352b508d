// Sealing and checking evidence bundles (core/evidence): the manifest is what `sha256sum -c`
// accepts, the signature what `minisign -V` accepts, and verifyBundle finds every single-byte
// change, every removed and every added file, in the directory and in the archive, naming it.
#include <QDir>
#include <QFile>
#include <QStandardPaths>
#include <QTemporaryDir>
#include <QtTest>

#include <sys/stat.h>

#include <chrono>
#include <filesystem>

#include "core/evidence/BundleSealer.h"
#include "core/evidence/BundleVerifier.h"
#include "core/evidence/Manifest.h"
#include "core/evidence/MinisignKey.h"
#include "core/evidence/TarReader.h"
#include "core/evidence/TarWriter.h"
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

// The byte offsets of the headers of a ustar archive (the blocks before the end-of-archive ones).
QList<qsizetype> headerOffsets(const QByteArray& tar)
{
    QList<qsizetype> out;
    for (qsizetype at = 0; at + 512 <= tar.size();) {
        const QByteArray h = tar.mid(at, 512);
        if (h.count('\0') == 512) break;
        out << at;
        const qint64 size = h.mid(124, 11).toLongLong(nullptr, 8);
        at += 512 + (size + 511) / 512 * 512;
    }
    return out;
}

// The header at `at` with its checksum recomputed as a writer would.
void fixChecksum(QByteArray& tar, qsizetype at)
{
    for (int i = 148; i < 156; ++i) tar[at + i] = ' ';
    unsigned sum = 0;
    for (int i = 0; i < 512; ++i) sum += static_cast<unsigned char>(tar[at + i]);
    const QByteArray digits = QByteArray::number(sum, 8).rightJustified(6, '0');
    for (int i = 0; i < 6; ++i) tar[at + 148 + i] = digits[i];
    tar[at + 154] = '\0';
}

// A copy of the bundle directory `from` at `to`.
void copyTree(const QString& from, const QString& to)
{
    std::error_code ec;
    std::filesystem::create_directories(std::filesystem::path(to.toStdString()).parent_path(), ec);
    std::filesystem::copy(from.toStdString(), to.toStdString(), std::filesystem::copy_options::recursive, ec);
    QVERIFY2(!ec, ec.message().c_str());
}

// DIR.tar of the bundle directory `dir` as TarWriter writes it (folders first, then files, sorted).
void archive(const QString& dir, const QString& tar)
{
    namespace fs = std::filesystem;
    const fs::path root = dir.toStdString();
    const std::string name = root.filename().string();
    QFile::remove(tar);
    auto w = TarWriter::create(tar.toStdString());
    QVERIFY2(w, w ? "" : w.message().c_str());
    std::vector<std::string> dirs, files;
    for (fs::recursive_directory_iterator it(root), end; it != end; ++it)
        (it->is_directory() ? dirs : files).push_back(it->path().lexically_relative(root).generic_string());
    std::sort(dirs.begin(), dirs.end());
    std::sort(files.begin(), files.end());
    QVERIFY(w->addDirectory(name, 1));
    for (const std::string& d : dirs) QVERIFY(w->addDirectory(name + "/" + d, 1));
    for (const std::string& f : files) QVERIFY(w->addFile(name + "/" + f, (root / f).string(), 1));
    QVERIFY(w->close());
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

    // The checksum field is left out of the sum it holds, so its form is what guards it: every
    // value of every one of its bytes in the first header, and in every header the values a
    // lenient reader would take for the same number (a space or NUL for a digit or for each
    // other, another digit); and the bytes of the other numeric fields, the type, the magic and
    // the version set to a terminator (NUL, or a space for a NUL). The sum covers those;
    // everySingleByteChangeOfTheArchiveIsFound flips every byte of the archive once more.
    void everyChangeOfAHeaderIsFound()
    {
        const QByteArray original = readFile(m_tar);
        const QList<qsizetype> headers = headerOffsets(original);
        QVERIFY(headers.size() >= 10);
        const QString copy = m_dir.filePath("header.tar");
        const auto start = std::chrono::steady_clock::now();
        size_t tried = 0;
        auto expectFound = [&](qsizetype at, char value) {
            if (value == original[at]) return;
            QByteArray changed = original;
            changed[at] = value;
            writeFile(copy, changed);
            auto c = verifyBundle(copy.toStdString());
            ++tried;
            const bool magic = at >= 257 && at < 262;  // of the first header: no archive at all
            QVERIFY2(magic ? !c : (c && !c->intact()),
                     qPrintable(QString("archive byte %1 set to %2 went unnoticed")
                                    .arg(at)
                                    .arg(static_cast<unsigned char>(value))));
        };
        const QByteArray lenient(
            "01234567 \0"
            "89\x80\xff",
            14);
        for (qsizetype h : headers) {
            for (qsizetype i = h + 148; i < h + 156; ++i) {
                if (h == 0)
                    for (int v = 0; v < 256; ++v) expectFound(i, char(v));
                else
                    for (const char v : lenient) expectFound(i, v);
            }
            // The other numeric fields (mode, uid, gid, size, mtime), the type, magic and version.
            for (qsizetype i = h + 100; i < h + 265; ++i)
                if (i < h + 148 || i == h + 156 || i >= h + 257)
                    expectFound(i, original[i] == 0 ? ' ' : '\0');
        }
        qInfo("%zu changed headers checked in %.1f s", tried,
              std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count());
    }

    // Other writers spell headers as TarWriter does: their archives of the bundle verify.
    void archivesOfOtherWritersVerify()
    {
        const QString tar = QStandardPaths::findExecutable("tar");
        if (!tar.isEmpty()) {
            const QString gnu = m_dir.filePath("gnu.tar");
            auto r = runProcess(tar, {"--format=ustar", "-cf", gnu, "-C", m_dir.path(), "case-17"});
            QVERIFY2(r.exitCode == 0, r.err.constData());
            BundleCheck c = check(gnu, m_pub);
            QVERIFY2(c.intact(), problemsText(c).c_str());
        }
        const QString python = QStringLiteral(FAULTLINE_TEST_PYTHON);
        if (python.isEmpty()) QSKIP("no python3 for tarfile");
        const QString py = m_dir.filePath("py.tar");
        auto r =
            runProcess(python, {"-c",
                                "import sys, tarfile\n"
                                "with tarfile.open(sys.argv[1], 'w', format=tarfile.USTAR_FORMAT) as t:\n"
                                "    t.add(sys.argv[2], arcname='case-17')\n",
                                py, m_bundle});
        QVERIFY2(r.exitCode == 0, r.err.constData());
        BundleCheck c = check(py, m_pub);
        QVERIFY2(c.intact(), problemsText(c).c_str());
    }

    // A bundle that says it was signed (its signing-key.pub, case.json's signed_by) and has no
    // signature had it stripped: without --pubkey too, that is a problem, not "unsigned".
    void strippedSignatureIsFound()
    {
        const QString stripped = m_dir.filePath("stripped/case-17");
        copyTree(m_bundle, stripped);
        QVERIFY(QFile::remove(stripped + "/MANIFEST.sha256.minisig"));
        archive(stripped, stripped + ".tar");
        for (const QString& what : {stripped, stripped + ".tar"}) {
            BundleCheck c = check(what);
            QVERIFY2(!c.intact(), qPrintable(what));
            QVERIFY2(names(c, kSignatureName), problemsText(c).c_str());
            QVERIFY2(problemsText(c).find("signing-key.pub") != std::string::npos, problemsText(c).c_str());
        }
        // The key and its manifest line gone too: case.json still names the key it was signed with.
        const QString named = m_dir.filePath("named");
        writeFile(named + "/case.json", "{\"case\": {\"id\": \"C\", \"signed_by\": \"89B02BEC0EDA9049\"}}\n");
        writeFile(named + "/report.md", "r\n");
        SealOptions o;
        o.key = &*m_key;
        o.writeTar = false;
        QVERIFY(sealBundle(named.toStdString(), o));
        QVERIFY(QFile::remove(named + "/MANIFEST.sha256.minisig"));
        QVERIFY(QFile::remove(named + "/signing-key.pub"));
        auto listed = parseManifest(readFile(named + "/MANIFEST.sha256").toStdString(), "M");
        QVERIFY(listed);
        std::vector<ManifestEntry> entries;
        for (const ManifestEntry& e : *listed)
            if (e.path != kSigningKeyName) entries.push_back(e);
        writeFile(named + "/MANIFEST.sha256", QByteArray::fromStdString(formatManifest(entries)));
        BundleCheck c = check(named);
        QVERIFY(!c.intact());
        QVERIFY2(names(c, kSignatureName), problemsText(c).c_str());
        QVERIFY2(problemsText(c).find("89B02BEC0EDA9049") != std::string::npos, problemsText(c).c_str());
        // A bundle that never was signed stays merely unsigned (unsignedBundles).
    }

    // Special files in a bundle are named, never opened (a FIFO would block the check).
    void specialFilesNeverBlock()
    {
        const QString copy = m_dir.filePath("fifo/case-17");
        copyTree(m_bundle, copy);
        QCOMPARE(::mkfifo((copy + "/vendor/pipe").toLocal8Bit().constData(), 0644), 0);
        BundleCheck c = check(copy);
        QVERIFY2(names(c, "vendor/pipe"), problemsText(c).c_str());
        // In the archive: a folder's entry turned into a FIFO's (type '6'), checksum made right.
        QByteArray tar = readFile(m_tar);
        qsizetype dirHeader = -1;
        for (qsizetype h : headerOffsets(tar))
            if (tar[h + 156] == '5' && h > 0) dirHeader = h;
        QVERIFY(dirHeader > 0);
        tar[dirHeader + 156] = '6';
        fixChecksum(tar, dirHeader);
        const QString fifoTar = m_dir.filePath("fifo.tar");
        writeFile(fifoTar, tar);
        BundleCheck t = check(fifoTar);
        QVERIFY(!t.intact());
        QVERIFY2(problemsText(t).find("tar type '6'") != std::string::npos, problemsText(t).c_str());
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
