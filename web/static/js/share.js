// Sharing: the native share sheet where there is one, else the clipboard.

// True when text reached the clipboard.
export async function copyText(text) {
  try {
    await navigator.clipboard.writeText(text);
    return true;
  } catch {
    return false;
  }
}
