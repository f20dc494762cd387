// Shows the copy button beside a token value and copies the value on click.
document.querySelectorAll("button[data-copy]").forEach(function (b) {
  var field = document.getElementById(b.dataset.copy);
  b.hidden = false;
  b.addEventListener("click", function () {
    field.select();
    navigator.clipboard.writeText(field.value).then(function () { b.textContent = "Copied"; });
  });
});
