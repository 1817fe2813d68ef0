// The files page's upload: the chosen file goes as the raw body of one request (streamed on
// the server, never held whole), with a progress bar. Same-origin only (the server checks
// the Origin header as it does for forms).
const form = document.querySelector("form[data-upload]");
if (form) {
  const input = form.querySelector("input[type=file]");
  const label = form.querySelector("input[name=label]");
  const pub = form.querySelector("input[name=public]");
  const bar = form.querySelector("progress");
  const status = form.querySelector("[data-upload-status]");
  form.querySelector("[data-needs-js]")?.remove();
  form.querySelector("button[type=submit]").disabled = false;
  form.addEventListener("submit", (event) => {
    event.preventDefault();
    const file = input.files?.[0];
    if (!file) {
      status.textContent = "Choose a file first.";
      input.focus();
      return;
    }
    const xhr = new XMLHttpRequest();
    xhr.open("POST", form.action);
    xhr.setRequestHeader("X-File-Name", encodeURIComponent(file.name));
    xhr.setRequestHeader("X-File-Label", encodeURIComponent(label?.value ?? ""));
    if (pub?.checked) xhr.setRequestHeader("X-Public", "1");
    xhr.setRequestHeader("Content-Type", "application/octet-stream");
    bar.hidden = false;
    bar.value = 0;
    status.classList.remove("error");
    bar.max = file.size || 1;
    status.textContent = "Uploading…";
    xhr.upload.addEventListener("progress", (e) => {
      bar.value = e.loaded;
      bar.max = e.total || bar.max;
      status.textContent = `Uploading… ${Math.floor((e.loaded / (e.total || 1)) * 100)}%`;
    });
    xhr.addEventListener("load", () => {
      let answer = {};
      try {
        answer = JSON.parse(xhr.responseText);
      } catch { /* not JSON */ }
      if (xhr.status >= 200 && xhr.status < 300 && answer.next) {
        status.textContent = "Uploaded.";
        location.assign(answer.next);
      } else {
        failed(answer.error ?? `the server answered ${xhr.status}.`);
      }
    });
    xhr.addEventListener("error", () => failed("the connection failed. Try again."));
    // A refused upload is not a full bar: the bar goes, the message stays, marked as an error.
    const failed = (why) => {
      bar.hidden = true;
      bar.value = 0;
      status.classList.add("error");
      status.textContent = `Not uploaded: ${why}`;
      input.focus();
    };
    xhr.send(file);
  });
}
