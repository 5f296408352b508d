// The rules for untrusted text and for files that hostile paths could redirect
// (docs/threat-model.md): printable text, temporaries that never follow a link, locks that
// refuse one, inputs that must be regular files, and a scratch directory that goes with its
// owner even when the owner is killed with -9.
#include <fcntl.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <QDir>
#include <QFile>
#include <QTemporaryDir>
#include <QtTest>
#include <filesystem>
#include <string>

#include "core/Text.h"
#include "core/io/AtomicFile.h"
#include "core/io/SafeFiles.h"
#include "core/io/ScratchDirectory.h"
#include "core/io/SnapshotWriter.h"

using namespace faultline;

namespace {

std::string readAll(const std::string& path)
{
    QFile f(QString::fromStdString(path));
    return f.open(QIODevice::ReadOnly) ? f.readAll().toStdString() : std::string("<unreadable>");
}

void writeAll(const std::string& path, const std::string& text)
{
    QFile f(QString::fromStdString(path));
    QVERIFY(f.open(QIODevice::WriteOnly | QIODevice::Truncate));
    QCOMPARE(f.write(text.data(), qint64(text.size())), qint64(text.size()));
}

}  // namespace

class TestSafeFiles : public QObject {
    Q_OBJECT
    QTemporaryDir m_dir;

    std::string path(const char* name) const { return m_dir.filePath(name).toStdString(); }

private slots:
    void printableText_data()
    {
        QTest::addColumn<QByteArray>("text");
        QTest::addColumn<bool>("printable");
        QTest::addColumn<QByteArray>("shown");
        QTest::newRow("plain") << QByteArray("node-7/cuda:0") << true << QByteArray("node-7/cuda:0");
        QTest::newRow("utf-8") << QByteArray("gpu \xc3\xa9\xe2\x82\xac") << true
                               << QByteArray("gpu \xc3\xa9\xe2\x82\xac");
        QTest::newRow("newline") << QByteArray("a\nid") << false << QByteArray("a\\x0aid");
        QTest::newRow("escape") << QByteArray("\x1b[2J") << false << QByteArray("\\x1b[2J");
        QTest::newRow("nul") << QByteArray("a\0b", 3) << false << QByteArray("a\\x00b");
        QTest::newRow("tab") << QByteArray("a\tb") << false << QByteArray("a\\x09b");
        QTest::newRow("del") << QByteArray("a\x7f") << false << QByteArray("a\\x7f");
        QTest::newRow("C1 CSI") << QByteArray(
                                       "a\xc2\x9b"
                                       "2J")
                                << false << QByteArray("a\\xc2\\x9b2J");
        QTest::newRow("invalid byte") << QByteArray("a\xff") << false << QByteArray("a\\xff");
        QTest::newRow("overlong slash") << QByteArray("\xc0\xaf") << false << QByteArray("\\xc0\\xaf");
        QTest::newRow("surrogate") << QByteArray("\xed\xa0\x80") << false << QByteArray("\\xed\\xa0\\x80");
        QTest::newRow("truncated") << QByteArray("\xe2\x82") << false << QByteArray("\\xe2\\x82");
        QTest::newRow("backslash") << QByteArray("a\\x41") << true << QByteArray("a\\\\x41");
    }
    void printableText()
    {
        QFETCH(QByteArray, text);
        QFETCH(bool, printable);
        QFETCH(QByteArray, shown);
        const std::string_view s(text.constData(), size_t(text.size()));
        QCOMPARE(isPrintableText(s), printable);
        const std::string out = faultline::printableText(s);
        QCOMPARE(QByteArray::fromStdString(out), shown);
        QVERIFY(isPrintableText(out));
    }

    // A link planted at every name a writer might use never has its target written.
    void atomicWriteNeverFollowsAPlantedLink()
    {
        const std::string victim = path("victim"), out = path("report.json");
        writeAll(victim, "precious");
        QVERIFY(QFile::link(QString::fromStdString(victim), QString::fromStdString(out + ".tmp")));
        const std::string text = "{}";
        QVERIFY(replaceFileAtomically(out, {{text.data(), text.size()}}).ok());
        QCOMPARE(readAll(out), text);
        QCOMPARE(readAll(victim), std::string("precious"));
    }

    void snapshotWriterNeverFollowsAPlantedLink()
    {
        const std::string victim = path("victim.h5"), out = path("out.h5");
        writeAll(victim, "not an hdf5 file, but the user's");
        QVERIFY(QFile::link(QString::fromStdString(victim), QString::fromStdString(out + ".tmp")));
        auto w = SnapshotWriter::create(out);
        QVERIFY2(w.ok(), w.ok() ? "" : w.message().c_str());
        QVERIFY(w->writeTensor("x", DType::UInt8, {2}, "ab").ok());
        QVERIFY(w->close().ok());
        QCOMPARE(readAll(victim), std::string("not an hdf5 file, but the user's"));
    }

    void tempFilesAreNewAndDistinct()
    {
        const std::string target = path("t.bin");
        auto a = createTempBeside(target), b = createTempBeside(target);
        QVERIFY(a.ok() && b.ok());
        QVERIFY(*a != *b);
        QVERIFY(QString::fromStdString(*a).startsWith(QString::fromStdString(target) + "."));
        struct stat st {};
        QCOMPARE(::lstat(a->c_str(), &st), 0);
        QVERIFY(S_ISREG(st.st_mode));
    }

    void lockFilesRefuseLinksAndSpecialFiles()
    {
        const std::string victim = path("lock-victim"), lock = path("campaign.lock");
        writeAll(victim, "keep");
        QVERIFY(QFile::link(QString::fromStdString(victim), QString::fromStdString(lock)));
        auto fd = openLockFile(lock);
        QVERIFY(!fd.ok());
        QVERIFY(fd.message().find(lock) != std::string::npos);
        QCOMPARE(readAll(victim), std::string("keep"));
        const std::string fifo = path("lock-fifo");
        QCOMPARE(::mkfifo(fifo.c_str(), 0600), 0);
        auto onFifo = openLockFile(fifo);  // O_NONBLOCK: no wait for a writer
        QVERIFY(!onFifo.ok());
        auto fresh = openLockFile(path("fresh.lock"));
        QVERIFY(fresh.ok());
        ::close(*fresh);
    }

    void inputsMustBeRegularFiles()
    {
        const std::string fifo = path("input-fifo");
        QCOMPARE(::mkfifo(fifo.c_str(), 0600), 0);
        Status st = checkRegularInput(fifo);
        QVERIFY(!st.ok());
        QVERIFY(st.message().find("FIFO") != std::string::npos);
        QCOMPARE(st.code(), ErrorCode::Usage);
        QVERIFY(!checkRegularInput(m_dir.path().toStdString()).ok());
        QVERIFY(!checkRegularInput(path("missing")).ok());
        writeAll(path("regular"), "x");
        QVERIFY(checkRegularInput(path("regular")).ok());
        QVERIFY(!checkReplaceableOutput(fifo, "--out").ok());
        QVERIFY(!checkReplaceableOutput(m_dir.path().toStdString(), "--out").ok());
        QVERIFY(checkReplaceableOutput(path("regular"), "--out").ok());
        QVERIFY(checkReplaceableOutput(path("not-yet"), "--out").ok());
        QVERIFY(sameFile(path("regular"), path("regular")));
        QVERIFY(!sameFile(path("regular"), fifo));
    }

    // The owner removes the directory when done...
    void scratchDirectoryGoesWithItsOwner()
    {
        std::string made;
        {
            auto d = ScratchDirectory::create(m_dir.path().toStdString(), "scratch-");
            QVERIFY(d.ok());
            made = d->path();
            writeAll(d->file("a.bin"), "data");
            QVERIFY(std::filesystem::exists(made));
        }
        QVERIFY(!std::filesystem::exists(made));
    }

    // ...and its guardian removes it when the owner is killed with -9.
    void scratchDirectoryGoesWithAKilledOwner()
    {
        int fds[2];
        QCOMPARE(::pipe(fds), 0);
        const pid_t child = ::fork();
        QVERIFY(child >= 0);
        if (child == 0) {
            ::close(fds[0]);
            auto d = ScratchDirectory::create(m_dir.path().toStdString(), "killed-");
            const std::string p = d.ok() ? d->path() + "\n" : std::string("\n");
            if (d.ok()) writeAll(d->file("out.safetensors"), "partial");
            (void)!::write(fds[1], p.data(), p.size());
            ::pause();
            ::_exit(0);
        }
        ::close(fds[1]);
        char buf[4096] = {};
        ssize_t n = 0, got;
        while ((got = ::read(fds[0], buf + n, sizeof buf - 1 - size_t(n))) > 0) {
            n += got;
            if (buf[n - 1] == '\n') break;
        }
        ::close(fds[0]);
        const std::string made = std::string(buf, size_t(n > 0 ? n - 1 : 0));
        QVERIFY(!made.empty());
        QVERIFY(std::filesystem::exists(made));
        ::kill(child, SIGKILL);
        int status = 0;
        ::waitpid(child, &status, 0);
        QTRY_VERIFY_WITH_TIMEOUT(!std::filesystem::exists(made), 10000);
    }
};

QTEST_GUILESS_MAIN(TestSafeFiles)
#include "test_safe_files.moc"
