// Passkeys on the sign-in page and the sign-in methods page, through @simplewebauthn/browser
// (served from this site as /static/simplewebauthn.js). Each form posts as any form does once
// the browser's answer is in its hidden `credential` field; without passkey support the forms
// say so and stay as they are.
const webauthn = globalThis.SimpleWebAuthnBrowser;

/** The options the server made for this browser (its challenge is kept for this browser). */
async function optionsFrom(path) {
  const res = await fetch(path, {
    method: "POST",
    headers: { accept: "application/json" },
    credentials: "same-origin",
  });
  const body = await res.json().catch(() => ({}));
  if (!res.ok) throw new Error(body.error ?? "the site did not answer; try again");
  return body;
}

/** What went wrong, said plainly. */
function say(err) {
  if (err?.name === "NotAllowedError" || err?.name === "AbortError") {
    return "No passkey was used: it was cancelled or took too long.";
  }
  if (err?.name === "InvalidStateError") return "This device already holds a passkey for you.";
  const text = String(err?.message ?? err);
  return text.charAt(0).toUpperCase() + text.slice(1);
}

function setUp(form, run) {
  const field = form.querySelector("input[name=credential]");
  const status = form.querySelector("[data-passkey-status]");
  if (!webauthn?.browserSupportsWebAuthn()) {
    if (status) status.textContent = "This browser cannot use passkeys.";
    return null;
  }
  form.hidden = false;
  const go = async (extra) => {
    field.value = JSON.stringify(await run(extra));
    form.submit();
  };
  form.addEventListener("submit", (event) => {
    if (field.value) return;
    if (form.dataset.passkey === "register" && !form.elements.namedItem("name").value.trim()) {
      return;
    }
    event.preventDefault();
    if (status) status.textContent = "";
    go(false).catch((err) => {
      if (status) status.textContent = say(err);
    });
  });
  return go;
}

const signIn = document.querySelector("form[data-passkey=sign-in]");
if (signIn) {
  const go = setUp(signIn, async (autofill) =>
    webauthn.startAuthentication({
      optionsJSON: await optionsFrom("/sign-in/passkey/options"),
      useBrowserAutofill: autofill,
    }));
  // The browser's passkey autofill on the address field, where it is supported.
  if (go && document.querySelector("input[autocomplete$=webauthn]")) {
    webauthn.browserSupportsWebAuthnAutofill().then((ok) => ok && go(true)).catch(() => {});
  }
}

const register = document.querySelector("form[data-passkey=register]");
if (register) {
  setUp(
    register,
    async () =>
      webauthn.startRegistration({ optionsJSON: await optionsFrom("/me/passkeys/options") }),
  );
}
