// Small enhancements for every page; each page works without them.

// Copy buttons: <button type="button" data-copy="#element-id">Copy</button>
for (const button of document.querySelectorAll("button[data-copy]")) {
  button.hidden = false;
  button.addEventListener("click", async () => {
    const source = document.querySelector(button.dataset.copy);
    if (!source) return;
    const text = "value" in source ? source.value : source.textContent;
    try {
      await navigator.clipboard.writeText(text ?? "");
      const label = button.textContent;
      button.textContent = "Copied";
      setTimeout(() => (button.textContent = label), 1500);
    } catch {
      if (source.select) source.select();
    }
  });
}

// Confirm dialogs: <form data-confirm="Delete this file?"> asks before it is sent.
for (const form of document.querySelectorAll("form[data-confirm]")) {
  form.addEventListener("submit", (event) => {
    if (!confirm(form.dataset.confirm)) event.preventDefault();
  });
}

// A form shown again with errors: focus its summary so keyboard and screen reader users hear it.
document.getElementById("errors")?.focus();
