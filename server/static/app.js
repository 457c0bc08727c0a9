// app.js
