// SPDX-License-Identifier: MIT
#include "ui/saveplandialog.h"

#include <QDialogButtonBox>
#include <QDir>
#include <QFileDialog>
#include <QFileInfo>
#include <QFormLayout>
#include <QHBoxLayout>
#include <QLabel>
#include <QLineEdit>
#include <QPlainTextEdit>
#include <QPushButton>
#include <QStandardPaths>
#include <QVBoxLayout>

#include "core/formats/builtins.h"

namespace memledger::ui {

SavePlanDialog::SavePlanDialog(const Suggestion &suggestion, QWidget *parent)
    : QDialog(parent)
    , m_name(new QLineEdit(suggestion.name, this))
    , m_description(new QPlainTextEdit(suggestion.description, this))
    , m_path(new QLineEdit(suggestion.path, this))
{
    setWindowTitle(tr("Save plan as"));
    auto *form = new QFormLayout;
    m_name->setAccessibleName(tr("Name"));
    form->addRow(tr("&Name"), m_name);
    m_description->setAccessibleName(tr("Description"));
    m_description->setTabChangesFocus(true);
    m_description->setPlaceholderText(tr("What this plan shows, and why"));
    const int lines = 5;
    m_description->setMinimumHeight(m_description->fontMetrics().lineSpacing() * lines);
    form->addRow(tr("&Description"), m_description);
    if (!suggestion.previousDescription.isEmpty()) {
        auto *previous
            = new QLabel(tr("<i>The plan was edited since it was loaded; its description then was:</i><br>%1")
                             .arg(suggestion.previousDescription.toHtmlEscaped()),
                         this);
        previous->setObjectName(QStringLiteral("previousDescription"));
        previous->setWordWrap(true);
        previous->setTextInteractionFlags(Qt::TextSelectableByMouse);
        previous->setForegroundRole(QPalette::PlaceholderText);
        form->addRow(QString(), previous);
    }
    // The file row in a widget of its own, so the "&File" label has the path as its buddy.
    auto *fileRow = new QWidget(this);
    auto *fileLayout = new QHBoxLayout(fileRow);
    fileLayout->setContentsMargins(0, 0, 0, 0);
    m_path->setAccessibleName(tr("File"));
    fileLayout->addWidget(m_path, 1);
    auto *choose = new QPushButton(tr("&Choose…"), this);
    fileLayout->addWidget(choose);
    form->addRow(tr("&File"), fileRow);
    if (auto *label = qobject_cast<QLabel *>(form->labelForField(fileRow)))
        label->setBuddy(m_path);

    auto *buttons = new QDialogButtonBox(QDialogButtonBox::Save | QDialogButtonBox::Cancel, this);
    m_ok = buttons->button(QDialogButtonBox::Save);
    auto *layout = new QVBoxLayout(this);
    layout->addLayout(form);
    layout->addWidget(buttons);
    connect(buttons, &QDialogButtonBox::accepted, this, &QDialog::accept);
    connect(buttons, &QDialogButtonBox::rejected, this, &QDialog::reject);
    connect(choose, &QPushButton::clicked, this, &SavePlanDialog::choosePath);
    connect(m_name, &QLineEdit::textChanged, this, &SavePlanDialog::updateOk);
    connect(m_path, &QLineEdit::textChanged, this, &SavePlanDialog::updateOk);
    updateOk();
    resize(std::max(sizeHint().width(), 560), sizeHint().height());
    m_name->selectAll();
    m_name->setFocus();
}

QString SavePlanDialog::name() const
{
    return m_name->text().trimmed();
}

QString SavePlanDialog::description() const
{
    return m_description->toPlainText().trimmed();
}

QString SavePlanDialog::path() const
{
    QString path = m_path->text().trimmed();
    if (!path.isEmpty() && QFileInfo(path).suffix().isEmpty())
        path += QStringLiteral(".json");
    return path;
}

void SavePlanDialog::setName(const QString &name)
{
    m_name->setText(name);
}

void SavePlanDialog::setDescription(const QString &description)
{
    m_description->setPlainText(description);
}

void SavePlanDialog::setPath(const QString &path)
{
    m_path->setText(path);
}

void SavePlanDialog::choosePath()
{
    const QString path
        = QFileDialog::getSaveFileName(this, tr("Save preset"), m_path->text(), tr("MemLedger presets (*.json)"));
    if (!path.isEmpty())
        m_path->setText(path);
}

void SavePlanDialog::updateOk()
{
    m_ok->setEnabled(!name().isEmpty() && !path().isEmpty());
}

QString SavePlanDialog::defaultFolder()
{
    const QString documents = QStandardPaths::writableLocation(QStandardPaths::DocumentsLocation);
    return documents.isEmpty() ? QDir::homePath() : documents;
}

QString SavePlanDialog::suggestedPath(const QString &folder, const QString &name)
{
    QString stem;
    for (const QChar c : name.toLower()) {
        if (c.isLetterOrNumber() || c == QLatin1Char('.') || c == QLatin1Char('_'))
            stem += c;
        else if (!stem.isEmpty() && !stem.endsWith(QLatin1Char('-')))
            stem += QLatin1Char('-');
    }
    while (stem.endsWith(QLatin1Char('-')) || stem.endsWith(QLatin1Char('.')))
        stem.chop(1);
    if (stem.isEmpty())
        stem = QStringLiteral("plan");
    return QDir(folder).filePath(stem + QStringLiteral(".json"));
}

bool SavePlanDialog::isShippedPreset(const QString &path)
{
    const QFileInfo file(path);
    if (file.dir().dirName() != QStringLiteral("scenarios") || file.suffix() != QStringLiteral("json"))
        return false;
    for (const std::string &name : builtinNames("scenarios"))
        if (file.completeBaseName() == QString::fromStdString(name))
            return true;
    return false;
}

} // namespace memledger::ui
