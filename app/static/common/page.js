// What both pages do with the page itself: text into an element, the state's query into the
// address bar, the clipboard, and an API problem into the error box.

export function setText(id, text) {
  document.getElementById(id).textContent = text;
}

/** The address bar shows the query (a string or URLSearchParams) without adding to history. */
export function showQuery(query) {
  const text = String(query);
  history.replaceState(null, "", `${location.pathname}${text ? `?${text}` : ""}${location.hash}`);
}

/** Copies `text`, saying in `status` whether it could. */
export async function copyText(text, status) {
  try {
    await navigator.clipboard.writeText(text);
    status.textContent = "Copied.";
    return true;
  } catch {
    status.textContent = "Copying was refused here: select the text and copy it.";
    return false;
  }
}

/** Copies the page's address, which holds every control's value. */
export async function copyLink(status) {
  if (await copyText(location.href, status)) status.textContent = "Link copied.";
  else status.textContent = `Copy this address: ${location.href}`;
}

/** An error's status and title, its detail, and a list of [field, message] lines below. */
export function fillProblem(box, error, fields = []) {
  const title = document.createElement("strong");
  title.textContent = error.status ? `${error.status} ${error.title || "Error"}` : error.title || "Error";
  const detail = document.createElement("p");
  detail.className = "error-detail";
  detail.textContent = error.detail || error.message;
  box.replaceChildren(title, detail);
  if (fields.length) {
    const list = document.createElement("ul");
    for (const [field, message] of fields) {
      const item = document.createElement("li");
      const code = document.createElement("code");
      code.textContent = field;
      item.append(code, `: ${message}`);
      list.append(item);
    }
    box.append(list);
  }
}
