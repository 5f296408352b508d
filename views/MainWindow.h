#pragma once
// The main window only wires: menus, docks, the file loader and the views. It holds no logic of
// its own.
#include <QMainWindow>
#include <QStringList>
#include <memory>

#include "core/TensorFile.h"

class QLabel;
class QMenu;
class QTableView;
class QSortFilterProxyModel;

namespace faultline::views {

class FileLoader;
class TensorTableModel;

class MainWindow : public QMainWindow {
    Q_OBJECT
public:
    explicit MainWindow(QWidget* parent = nullptr);
    ~MainWindow() override;

    // Opens the files (the first one is shown); work happens off the GUI thread.
    void openFiles(const QStringList& paths);

    // For tests and status: what is loaded, the last error shown.
    TensorTableModel* tensorModel() const { return m_tensorModel; }
    QString lastError() const { return m_lastError; }

signals:
    void fileShown(const QString& path);
    void errorShown(const QString& message);

protected:
    void closeEvent(QCloseEvent* event) override;
    void dragEnterEvent(QDragEnterEvent* event) override;
    void dropEvent(QDropEvent* event) override;

private:
    void createActions();
    void onFileOpenedOnUi(quint64 job, std::shared_ptr<const faultline::TensorFile> file);
    void onFileFailedOnUi(quint64 job, const QString& message);
    void addRecentFile(const QString& path);
    void rebuildRecentMenu();
    void applyTheme(bool dark);

    FileLoader* m_loader = nullptr;
    TensorTableModel* m_tensorModel = nullptr;
    QSortFilterProxyModel* m_tensorProxy = nullptr;
    QTableView* m_tensorView = nullptr;
    QMenu* m_recentMenu = nullptr;
    QLabel* m_statusLabel = nullptr;
    QString m_pendingPath;
    QString m_lastError;
};

}  // namespace faultline::views
