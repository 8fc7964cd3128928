"""What instructors read: the class report (report.html from Jinja templates, report.json),
its charts, the grade files for LMSs, and the templates of the pages. Rule: reads results,
never grades."""
