// SPDX-License-Identifier: MIT
#pragma once

#include <QObject>
#include <QString>

#include <string>

class QMenu;
class QWidget;

namespace memledger::ui {

class Document;
class MainWindow;

// File > Export: each chart as a PNG (at imageScale() device pixels per
// pixel) or an SVG, captioned with the plan it shows; the ledger as CSV or
// Markdown (core's reports); the plans found as CSV; and the PNG scale
// (remembered). A chart is exported from its own view, shown first: hidden
// views are brought up to date only when shown.
class ChartExport : public QObject
{
    Q_OBJECT
public:
    ChartExport(MainWindow *window, Document *document);

    // Returns the Export menu, which others add to.
    QMenu *addMenu(QMenu *file);
    // The line an exported chart carries under it: the model, the plan's
    // parallel summary (core's, as the header shows it) and the device.
    QString caption() const;
    // Writes `chart` to `path` (PNG at imageScale() device pixels per pixel,
    // or SVG), captioned; a failure in a message box.
    bool exportChartTo(QWidget *chart, const QString &title, const QString &path);
    // Device pixels per pixel of exported PNGs (File > Export > PNG scale; remembered).
    double imageScale() const { return m_imageScale; }
    void setImageScale(double scale);

private:
    // Shows the view `chart` is drawn in, then asks where to write it.
    void exportFrom(QWidget *chart, const QString &title);
    void exportLedgerText(const QString &filter, const QString &suffix, const std::string &text);

    MainWindow *m_window;
    Document *m_document;
    double m_imageScale = 2.0;
};

} // namespace memledger::ui
