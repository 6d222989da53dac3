// SPDX-License-Identifier: MIT
#include "ui/launchdialogs.h"

#include <QApplication>
#include <QCheckBox>
#include <QClipboard>
#include <QComboBox>
#include <QDialogButtonBox>
#include <QFileDialog>
#include <QFileInfo>
#include <QFontDatabase>
#include <QFormLayout>
#include <QHBoxLayout>
#include <QLabel>
#include <QListWidget>
#include <QMessageBox>
#include <QPlainTextEdit>
#include <QPushButton>
#include <QSpinBox>
#include <QVBoxLayout>

#include "core/formats/builtins.h"
#include "core/formats/jsontext.h"
#include "ui/exporter.h"
#include "ui/qtstring.h"

namespace memledger::ui {

namespace {

constexpr int kMaxGpus = 1 << 24; // as memledger-cli import --gpus

QPlainTextEdit *monospaceEdit(QWidget *parent)
{
    auto *edit = new QPlainTextEdit(parent);
    edit->setFont(QFontDatabase::systemFont(QFontDatabase::FixedFont));
    edit->setLineWrapMode(QPlainTextEdit::NoWrap);
    return edit;
}

} // namespace

LaunchImportDialog::LaunchImportDialog(const Config &current, QWidget *parent)
    : QDialog(parent)
    , m_current(current)
    , m_file(new QLabel(tr("No file: paste a launch script, argument list, torchtitan TOML or DeepSpeed JSON below"),
                        this))
    , m_text(monospaceEdit(this))
    , m_model(new QComboBox(this))
    , m_gpus(new QSpinBox(this))
    , m_replaceGpus(new QCheckBox(tr("also when the file says"), this))
    , m_summary(new QLabel(this))
    , m_report(new QListWidget(this))
{
    setWindowTitle(tr("Import launch config"));
    auto *choose = new QPushButton(tr("Choose file…"), this);
    connect(choose, &QPushButton::clicked, this, &LaunchImportDialog::chooseFile);
    auto *fileRow = new QHBoxLayout;
    m_file->setWordWrap(true);
    fileRow->addWidget(m_file, 1);
    fileRow->addWidget(choose);

    m_model->addItem(tr("The file's model, else the current plan's"));
    for (const std::string &name : builtinNames("models"))
        m_model->addItem(toQString(name), toQString(name));
    m_model->setToolTip(tr("A DeepSpeed config does not describe its model; a torchtitan config names a llama3 "
                           "flavor, which a model chosen here replaces; a Megatron-LM launch describes its own"));
    m_gpus->setRange(1, kMaxGpus);
    m_gpus->setValue(static_cast<int>(std::clamp<std::int64_t>(current.parallelism.gpus(), 1, kMaxGpus)));
    auto *gpusRow = new QHBoxLayout;
    gpusRow->addWidget(m_gpus);
    gpusRow->addWidget(m_replaceGpus);
    gpusRow->addStretch(1);
    auto *form = new QFormLayout;
    form->addRow(tr("Model (DeepSpeed, torchtitan):"), m_model);
    form->addRow(tr("GPUs when the file does not say:"), gpusRow);

    m_text->setPlaceholderText(tr("torchrun … pretrain_gpt.py --num-layers 32 …, [model] flavor = \"8B\" …, or "
                                  "{ \"train_batch_size\": … }"));
    m_summary->setWordWrap(true);
    m_report->setWordWrap(true);
    m_report->setTextElideMode(Qt::ElideNone);

    auto *buttons = new QDialogButtonBox(QDialogButtonBox::Cancel, this);
    m_apply = buttons->addButton(tr("Apply"), QDialogButtonBox::AcceptRole);
    m_apply->setToolTip(tr("Replaces the current plan; Edit > Undo gives it back"));
    connect(buttons, &QDialogButtonBox::accepted, this, &QDialog::accept);
    connect(buttons, &QDialogButtonBox::rejected, this, &QDialog::reject);

    auto *layout = new QVBoxLayout(this);
    layout->addLayout(fileRow);
    layout->addWidget(m_text, 3);
    layout->addLayout(form);
    layout->addWidget(m_summary);
    layout->addWidget(m_report, 2);
    layout->addWidget(buttons);
    resize(820, 600); // fits a 1024×768 screen with its panels

    connect(m_text, &QPlainTextEdit::textChanged, this, &LaunchImportDialog::reimport);
    connect(m_model, &QComboBox::currentIndexChanged, this, &LaunchImportDialog::reimport);
    connect(m_gpus, &QSpinBox::valueChanged, this, &LaunchImportDialog::reimport);
    connect(m_replaceGpus, &QCheckBox::toggled, this, &LaunchImportDialog::reimport);
    m_chooser = [](QWidget *p) {
        return QFileDialog::getOpenFileName(p, tr("Import launch config"), QString(),
                                            tr("Launch configs (*.sh *.txt *.toml *.json);;All files (*)"));
    };
    reimport();
}

bool LaunchImportDialog::loadFile(const QString &path)
{
    Problems problems;
    const std::optional<std::string> text = readTextFile(path.toStdString(), problems);
    if (!text) {
        m_result = LaunchImport{};
        m_result.problems = problems;
        showResult();
        return false;
    }
    m_path = path;
    m_file->setText(tr("File: %1").arg(QFileInfo(path).fileName()));
    m_file->setToolTip(path);
    m_text->setPlainText(toQString(*text)); // reimports
    return true;
}

void LaunchImportDialog::setText(const QString &text)
{
    m_text->setPlainText(text);
}

void LaunchImportDialog::setModel(const QString &name)
{
    const int index = m_model->findData(name);
    m_model->setCurrentIndex(index < 0 ? 0 : index);
}

void LaunchImportDialog::chooseFile()
{
    const QString path = m_chooser(this);
    if (!path.isEmpty())
        loadFile(path);
}

LaunchOptions LaunchImportDialog::options() const
{
    LaunchOptions o;
    o.defaultGpus = m_gpus->value();
    if (m_replaceGpus->isChecked())
        o.gpus = m_gpus->value();
    if (m_model->currentIndex() > 0)
        o.model = m_model->currentData().toString().toStdString();
    else
        o.defaultModel = m_current.model;
    return o;
}

void LaunchImportDialog::reimport()
{
    const std::string text = m_text->toPlainText().toStdString();
    const std::string path = m_path.toStdString();
    // A Megatron-LM launch describes its model (core refuses --model for it); DeepSpeed's
    // and torchtitan's take the model chosen here.
    const LaunchFormat format = detectLaunchFormat(path, text);
    const bool modelChoice = format == LaunchFormat::DeepSpeed || format == LaunchFormat::Torchtitan;
    m_model->setEnabled(modelChoice);
    LaunchOptions o = options();
    if (!modelChoice)
        o.model.clear();
    if (text.find_first_not_of(" \t\r\n") == std::string::npos)
        m_result = LaunchImport{};
    else
        m_result = importLaunchText(text, path, o, {});
    showResult();
}

QStringList LaunchImportDialog::reportLines() const
{
    QStringList lines;
    for (const Problem &p : m_result.problems)
        lines << (p.isError() ? tr("Error: %1") : tr("Warning: %1")).arg(toQString(p.toString()));
    for (const std::string &note : m_result.notes)
        lines << tr("Note: %1").arg(toQString(note));
    for (const UnusedSetting &u : m_result.unused)
        lines << tr("Unused: %1").arg(toQString(unusedSettingText(u)));
    return lines;
}

void LaunchImportDialog::showResult()
{
    m_report->clear();
    for (const QString &line : reportLines()) {
        auto *item = new QListWidgetItem(line, m_report);
        if (line.startsWith(tr("Error: "))) { // bold, not a colour: read the same in either palette
            QFont bold = item->font();
            bold.setBold(true);
            item->setFont(bold);
        }
    }
    const bool empty = m_text->toPlainText().trimmed().isEmpty();
    m_apply->setEnabled(m_result.config.has_value());
    if (empty && m_result.problems.empty())
        m_summary->setText(tr("Choose a file or paste its text."));
    else if (!m_result.config)
        m_summary->setText(tr("Not importable: fix the errors below (Apply stays disabled)."));
    else
        m_summary->setText(tr("Ready: %1 notes and %2 unused settings below; Apply replaces the current plan.")
                               .arg(m_result.notes.size())
                               .arg(m_result.unused.size()));
}

LaunchExportDialog::LaunchExportDialog(const Config &config, LaunchFormat format, QWidget *parent)
    : QDialog(parent)
    , m_format(format)
    , m_export(exportLaunch(config, format))
    , m_text(monospaceEdit(this))
{
    setWindowTitle(format == LaunchFormat::DeepSpeed    ? tr("Export as DeepSpeed JSON")
                   : format == LaunchFormat::Torchtitan ? tr("Export as torchtitan TOML")
                                                        : tr("Export as Megatron-LM arguments"));
    m_text->setReadOnly(true);
    m_text->setPlainText(toQString(m_export.text));
    auto *layout = new QVBoxLayout(this);
    QStringList problems;
    for (const Problem &p : m_export.problems)
        problems << (p.isError() ? tr("Error: %1") : tr("Warning: %1")).arg(toQString(p.toString()));
    if (!problems.isEmpty()) {
        auto *label = new QLabel(problems.join(QLatin1Char('\n')), this);
        label->setWordWrap(true);
        label->setTextInteractionFlags(Qt::TextSelectableByMouse);
        layout->addWidget(label);
    }
    layout->addWidget(m_text, 1);
    auto *buttons = new QDialogButtonBox(QDialogButtonBox::Close, this);
    m_copy = buttons->addButton(tr("Copy"), QDialogButtonBox::ActionRole);
    m_save = buttons->addButton(tr("Save…"), QDialogButtonBox::ActionRole);
    m_copy->setEnabled(!m_export.text.empty());
    m_save->setEnabled(!m_export.text.empty());
    connect(m_copy, &QPushButton::clicked, this, [this] { QApplication::clipboard()->setText(text()); });
    connect(m_save, &QPushButton::clicked, this, &LaunchExportDialog::save);
    connect(buttons, &QDialogButtonBox::rejected, this, &QDialog::reject);
    layout->addWidget(buttons);
    resize(820, 600);
    m_chooser = [format](QWidget *p) {
        if (format == LaunchFormat::DeepSpeed)
            return QFileDialog::getSaveFileName(p, tr("Save DeepSpeed JSON"), QStringLiteral("ds_config.json"),
                                                tr("JSON (*.json)"));
        if (format == LaunchFormat::Torchtitan)
            return QFileDialog::getSaveFileName(p, tr("Save torchtitan TOML"), QStringLiteral("train_config.toml"),
                                                tr("TOML (*.toml)"));
        return QFileDialog::getSaveFileName(p, tr("Save Megatron-LM arguments"), QStringLiteral("launch.sh"),
                                            tr("Shell scripts (*.sh);;All files (*)"));
    };
}

QString LaunchExportDialog::text() const
{
    return toQString(m_export.text);
}

bool LaunchExportDialog::saveTo(const QString &path, QString *error) const
{
    return exportText(m_export.text, path, error);
}

void LaunchExportDialog::save()
{
    const QString path = m_chooser(this);
    if (path.isEmpty())
        return;
    QString error;
    if (!saveTo(path, &error))
        QMessageBox::warning(this, tr("Save failed"), tr("%1 could not be written: %2").arg(path, error));
}

} // namespace memledger::ui
