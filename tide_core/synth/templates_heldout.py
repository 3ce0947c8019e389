"""Template family ``heldout``: wording used only in the held-out benchmark (and the demo).

No row here may repeat a training template; layouts, section names and phrasing differ on
purpose so that the benchmark measures generalisation rather than template recall.
"""

ROWS = [
    # ---------------------------------------------------------------- generic headers
    ("any", "header", """*** {title} ***
{pt:hdr}   ({sexm}, {age:n})   Unit No. {mrn}
Born {date:dob|full}
Location: {hosp}, {neg:room}
Note date/time: {date:note|time}"""),
    ("any", "header", """{hosp} - {faddr:cityzip}
Pt: {pt:hdr}  DOB: {date:dob}  MR#: {mrn}  Enc: {csn}
Provider: {attending:sig}
{title} for visit of {date:note|full}"""),
    ("any", "header", """{title}
----------------------------------------
Name ............ {pt:hdr}
Record no ....... {mrn}
Account ......... {acct}
Birth date ...... {date:dob|numeric}
Admitted ........ {date:admit|full}
Facility ........ {hosp}"""),
    ("any", "header", """[{hosp}] {title} / {date:note|numeric}
{pt:full}, a {age} {sexl}; MRN {mrn}; insurance {member}"""),
    # ---------------------------------------------------------------- generic sign-offs
    ("any", "sign", """-- {attending:sig} ({specialty}) / signed {date:note|full} at {neg:time} / {neg:version}"""),
    ("any", "sign", """Note authored by {np:sig} in collaboration with {attending:dr}. Reachable via secure chat or {phone:ext}."""),
    ("any", "sign", """Attestation: Patient seen and discussed with resident {resident:plain}. I agree with the findings and plan.
{attending:sig}   License {license}"""),
    ("any", "sign", """{attending:sig}
Dept. of {specialty} | {faddr:block}
{neg:page}"""),
    # ---------------------------------------------------------------- generic extras
    ("any", "extra", """Psychosocial: {pt:first} [[is divorced and|is married and]] lives in {city}; {his} main support is {rel}. [[Occupation:|Job:]] forklift operator, {employer}. Quit tobacco {neg:duration}; no EtOH."""),
    ("any", "extra", """Demographics verified -- street: {addr:street}; city/state: {addr:citystate}; zip: {addr:zip}; cell {phone:pt}; e-mail {email:pt}. Next of kin: {rel:name}, tel. {rel:phone}."""),
    ("any", "extra", """FHx: brother deceased at {relage} from {dx}; maternal aunt with {neg:eponym_disease}. Grandfather with {neg:eponym_disease}."""),
    ("any", "extra", """Billing: {neg:cpt}, {neg:icd}. Coverage member no. {member}; SSN on file {ssn}. Records also at {url:site}."""),
    ("any", "extra", """Home meds reconciled:
{neg:meds}
Allergy list: [[none known|latex|iodinated contrast (hives)|ACE inhibitors (cough)]]"""),
    ("any", "extra", """Return precautions reviewed. Appointment with {pcp:sig} booked for {date:followup|full}; reminder will be sent via {url:portal}. Questions: {phone:fac}."""),
    ("any", "header", """{title}   [{neg:version}]
{pt:hdr} * {age:n} yrs * {sexl} * MRN {mrn} * Acct {acct}
{hosp} / {faddr:citystate}
Service date {date:note}   Referring: {referring:sig}"""),
    ("any", "extra", """Virtual encounter via {url:tele} (client address {url:ip}); patient joined from {addr:citystate}. Identity confirmed with birth date {date:dob|full}."""),
    ("any", "extra", """Surrogate decision maker: {rel:name}; relationship: {rel:relation}; contact no. {rel:phone}. Living will scanned {date:prior|numeric}."""),
    ("any", "extra", """Care coordination: prior workup at {clinic} and admission to {hosp:other} ({date:prior2|month}). Vaccines: pneumococcal {year:vaccine}; COVID booster {date:vaccine|partial}."""),
    # ---------------------------------------------------------------- discharge summary
    ("discharge_summary", "body", """Admitted: {date:admit}   Discharged: {date:discharge}   Length of stay: {num:2-12} days
Discharging physician: {attending:sig}

Reason for admission
{pt:title}, age {age:n}, came in with {sx}; [[known|longstanding]] {dx}. Initial {neg:vitals}.

Summary of stay
Day 1 ({date:admit|partial}): started {neg:med}; {neg:eponym_device} inserted.
Subsequent days: {neg:labs}. Evaluated by {consultant:dr} of {specialty}. {neg:eponym_disease} ruled out.

Discharge plan
Home with home health via {clinic}. {His} {rel:relation}, {rel:name}, will stay with {him} at {addr:line}. PCP {pcp:dr} to see {him} {date:followup|partial}."""),
    ("discharge_summary", "body", """Final diagnosis: {dx} ({neg:icd}); secondary: {neg:eponym_disease}
Stay: {range:admit,discharge} on {neg:room}
Narrative: The patient, {pt:full}, {age} {man}, was transferred from {hosp:other} after presenting there on {date:transfer|numeric}. Treated with {neg:med} and {neg:med}. Hemodynamics improved ({neg:bp}). Pending at discharge: {neg:lab}.
Instructions given to patient and {rel}. {He} works at {employer} and was given a work note through {date:future2|full}."""),
    # ---------------------------------------------------------------- progress note
    ("progress_note", "body", """Visit type: established patient, {date:note|full}
CC: f/u {dx}
History: {pt:ref} [[last came in|was last seen]] {date:lastvisit|full}. Since then, {sx}. No ED visits. {His} {rel:relation} helps with pills ({neg:med}).
Vitals: {neg:vitals}
Exam: {neg:eponym_sign} not present. {neg:measure}.
Impression/Plan: {dx} - stable. {neg:score}. Labs at next visit; order {order}. Recheck in {date:followup|month}."""),
    ("progress_note", "body", """Daily note, HD {num:2-10}
Events: {sx} overnight, responded to {neg:med}. Seen on rounds with {resident:dr} and {attending:dr}.
Data: {neg:labs}; {neg:ratio}.
Pt {pt:init}, {age:n} yo, adm {date:admit|numeric} for {dx}.
Plan: wean O2, PT consult ({therapist:sig}), {neg:eponym_device} remains, dispo planning with SW {sw:sig}."""),
    # ---------------------------------------------------------------- radiology
    ("radiology_report", "body", """Study: MRI brain without and with contrast    Acc# {accession}
Performed {date:imaging|full} at {hosp}; prior exam {date:prior|numeric}
History: {age:n}-year-old with {sx}; eval for {neg:eponym_disease}.
Report: No restricted diffusion. {neg:measure} nonspecific T2 hyperintensity. Ventricles normal.
Conclusion: Stable compared with {date:prior|month}. Communicated to {attending:dr} on {date:imaging|partial} at {neg:time}.
Interpreting radiologist: {radiologist:sig}"""),
    ("radiology_report", "body", """ULTRASOUND RIGHT UPPER QUADRANT  ({date:imaging|time})
Requested by {pcp:sig} for {sx}.
Gallbladder: multiple stones, wall {neg:measure}. {neg:eponym_sign} positive per sonographer ({tech:sig}).
CBD {neg:measure}. Liver: normal echotexture.
IMPRESSION: Cholelithiasis without sonographic evidence of acute cholecystitis. PACS {neg:version}. Images available at {url:ip}."""),
    # ---------------------------------------------------------------- pathology
    ("pathology_report", "body", """Pathology consultation    Our # {accession}    Outside # {alnum}
Outside institution: {hosp:other}; slides received {date:received|numeric}
Patient identifiers on slides match {pt:hdr} / {mrn}
Microscopic: sections show {neg:eponym_disease}; mitoses {neg:ratio}.
Final: {neg:eponym_disease}. Size {neg:measure}.
Reported {date:reported|full} by {pathologist:sig}; copy to {surgeon:dr}."""),
    ("pathology_report", "body", """CYTOLOGY - FNA thyroid, left lobe (collected {date:collected|partial})
Adequacy: satisfactory ({neg:ratio}).
Bethesda category II, benign follicular nodule.
Clinician: {pcp:dr}. Contact {phone:fac} for questions. Lab accession {accession}."""),
    # ---------------------------------------------------------------- ED
    ("ed_note", "body", """Arrival {date:note|time} by private vehicle, accompanied by {rel}.
Presenting problem: {sx} since {date:onset|partial}.
PMHx: {dx}; {neg:eponym_disease}. Surgeries: {proc} ({year:dx}); {neg:eponym_procedure}.
Initial assessment: {neg:vitals}; {neg:score}.
Workup: {neg:labs}. ECG: sinus, {neg:eponym_sign} absent.
Decision: discharge with {neg:med}; follow up with {pcp:dr} at {clinic}. Work excuse for {employer} provided. Provider: {np:sig}"""),
    ("ed_note", "body", """Trauma activation level 2 at {neg:time}. {age} {sexl}, restrained driver, MVC on the interstate near {city}. {neg:score}. FAST negative.
Imaging per {radiologist:dr}: no acute findings. {neg:eponym_sign} intact.
Patient's {rel:relation} {rel:name} called at {rel:phone}. Admitted to trauma service ({surgeon:dr})."""),
    # ---------------------------------------------------------------- nursing
    ("nursing_note", "body", """Nursing assessment {date:note|numeric} at {neg:time}:
Neuro: alert, oriented. {neg:score}.
Cardio: {neg:bp}, regular. GU: {neg:eponym_device} to gravity.
Education: reviewed {neg:med} with patient and {rel}.
Safety: bed alarm on, {neg:room}.
Signed: {rn:plain}, RN"""),
    ("nursing_note", "body", """Handoff to night RN {rn2:plain} at {neg:time}. {pt:title} ambulated {num:2-4} times with PT. Intake {neg:measure}. Daughter/son contact on file: {rel:phone}. Chaplain visit requested. Wound care per {neg:eponym_score} protocol. -- {rn:sig}"""),
    # ---------------------------------------------------------------- referral letter
    ("referral_letter", "header", """{date:note|full}

To: {referring:sig}, {hosp:other}
From: {consultant:sig}, {clinic}
Regarding: {pt:hdr} (born {date:dob|full}; record {mrn})"""),
    ("referral_letter", "body", """Dear Colleague,

I am writing to refer {pt:full}, {age} {man}, whom I have followed since {date:prior|month} for {dx}. Over the past months {he} has developed {sx} despite {neg:med}. {His} most recent {neg:lab} ({date:prior2|full}) was concerning.

{He} resides at {addr:block} and can be reached at {phone:pt} or {email:pt}. {He} prefers that appointments be arranged through {his} {rel:relation}, {rel:name}.

Thank you for seeing {him}."""),
    ("referral_letter", "sign", """With kind regards,
{consultant:sig}
Direct line {phone:dr} | {email:consultant}"""),
    # ---------------------------------------------------------------- lab report
    ("lab_report", "body", """=== CHEMISTRY PANEL ===
Patient {pt:hdr}   Lab ID {accession}
Drawn {date:collected|numeric}, {neg:time}   Verified {date:received|full}
{neg:labs}
Flags: {neg:lab} (H)
Verified by {tech:sig}; reviewed by {pathologist:dr}. Lab director license {license}."""),
    ("lab_report", "body", """Microbiology: urine culture
Source: clean catch, {date:collected|full}
Result: >100,000 CFU/mL E. coli. Susceptibilities: {neg:med} (S).
Notified {pcp:dr}'s office ({phone:fac}) on {date:reported|partial}. Order {order}."""),
    # ---------------------------------------------------------------- telephone
    ("telephone_encounter", "body", """Phone note {date:note|numeric}: Returned call to {pt:ref} at {phone:pt}. No answer; voicemail left at {neg:time} asking pt to call back. Second attempt {date:future2|partial} - spoke with {rel}. Reviewed results from {date:prior2|full}. Pt instructed to pick up {neg:med} at pharmacy on {addr:street}.
-- {ma:sig}"""),
    ("telephone_encounter", "body", """Triage call. Caller: {rel:name} ({rel:relation}), phone {rel:phone}.
Concern: {pt:first} with {sx} x {num:1-5} days.
Protocol: {neg:version}; disposition: see within 24 hours. Appointment made with {np:dr} at {clinic} for {date:future2|full}.
Nurse: {rn:sig}"""),
    # ---------------------------------------------------------------- operative
    ("operative_note", "body", """OPERATIVE REPORT    Case date {date:surgery|full}    OR {num:1-12}
Operation performed: {proc}
Indications: {age:n}-year-old with {dx} refractory to {neg:med}.
Team: {surgeon:sig} (primary); {resident:sig} (assist); anesthesia by {anesth:sig}.
Procedure in detail: After informed consent, the patient was brought to the operating room, identity confirmed by armband ({mrn}). {neg:eponym_position}. {neg:eponym_device} was used. Specimen sent as {accession}.
Estimated blood loss {neg:measure}. Device serial {device}."""),
    ("operative_note", "body", """Immediate post-procedure note ({date:surgery|time})
Pre/post diagnosis: {dx}
Operation: {proc}
Primary: {surgeon:plain}; Anesthesia: MAC, {anesth:plain}
Findings: {neg:eponym_disease}; {neg:measure}
Condition: stable to recovery. Family ({rel}) updated in waiting room."""),
    # ---------------------------------------------------------------- consult
    ("consult_note", "body", """{specialty} consult - initial evaluation
Referred by: {attending:sig}   Question: {sx}
Background: {pt:full} ({age:n} y/o {sexl}), seen previously at {hosp:other} in {date:prior|month}. Born in {country}, moved to {state} in {year:dx}. {He} is enrolled at {school}.
Findings: {neg:vitals}; {neg:eponym_sign} noted; {neg:score}.
Impression: {dx}. Suggest {neg:med}; repeat {neg:lab}.
Thank you for this consult. {consultant:sig} - pager {pager}"""),
    ("consult_note", "body", """Inpatient consult, {date:note|full}
We were asked by {attending:dr} to assess {pt:ref} for {dx}. Admitted {date:admit|partial} with {sx}. Relevant: {neg:eponym_disease}, prior {neg:eponym_procedure}.
Our assessment: {neg:score}; {neg:ratio}.
Recs: {neg:med}; reassess in 48 h. Discussed with {his} {rel:relation} by phone ({rel:phone}).
{consultant:dr}"""),
]

ROWS += [
    ("discharge_summary", "body", """Hospitalization summary for {pt:ref}
In: {date:admit|numeric}  Out: {date:discharge|numeric}  Unit: {neg:room}
Presentation: {age:n} y/o {sexl} with {sx} and known {neg:eponym_disease}.
Key events: {neg:eponym_device} placed on day 2; {proc} performed {date:surgery|full} by {surgeon:sig}.
Discharge exam: {neg:vitals}.
Going home to {addr:citystate} with {his} {rel:relation}; PCP {pcp:sig} ({phone:fac}) notified. Next labs {date:future2|partial}."""),
    ("progress_note", "body", """Clinic note - {specialty}
{pt:full} ({age:n}) is here with {rel} for {dx}. Symptoms: {sx}, better since {date:prior2|partial}. {He} is on {neg:med}.
Objective: {neg:bp}; {neg:measure}; {neg:eponym_sign} absent.
Labs reviewed from {date:prior2|full}: {neg:lab}.
Plan: continue; see again in the fall ({date:followup|month}). Letter for {employer} provided."""),
    ("radiology_report", "body", """Nuclear medicine / [[bone scan|V/Q scan|PET-CT]]
Exam no. {accession}   Date/time {date:imaging|time}
Pt {pt:hdr}, {age:n}, ref. by {consultant:dr}
History: staging, {neg:eponym_disease}.
Result: {neg:measure} focus of uptake; SUV {neg:ratio}. Compared with {date:prior|full} from {hosp:other}.
Opinion: likely benign. Dictated {radiologist:plain}; transcribed {date:reported|numeric}."""),
    ("pathology_report", "body", """Dermatopathology report - Ref {accession}
Biopsy site: left forearm, shave; taken {date:collected|full} by {np:sig} at {clinic}
Microscopy: atypical melanocytic proliferation; {neg:eponym_score}; no {neg:eponym_disease}.
Diagnosis: compound dysplastic nevus, moderate atypia. Margins {neg:measure}.
Dermatopathologist: {pathologist:sig}, {date:reported|numeric}"""),
    ("ed_note", "body", """EMERGENCY DEPARTMENT RECORD
Triage time {neg:time} | Acuity 3 | {neg:room}
{pt:hdr}, {age} {sexl}, walk-in, complaining of {sx} after working a shift at {employer}.
Allergies reviewed. {neg:vitals}.
Course: {neg:med} given; {neg:eponym_sign} negative; {neg:lab}.
Impression: {dx}. Released at {neg:time} in care of {rel}. Follow-up: {clinic}, {phone:other}."""),
    ("nursing_note", "body", """Care plan update {date:note|full}
Problem: impaired mobility. Intervention: turn q2h, {neg:eponym_score} care, {neg:dose} given for pain {neg:score}.
Outcome: tolerating. {pt:title} requests that {his} {rel:relation} {rel:name} be called with updates ({rel:phone}).
Charge nurse {rn2:sig} aware. -- {rn:plain}"""),
    ("referral_letter", "body", """Re: referral of {pt:hdr}, date of birth {date:dob|full}

Dear {referring:sig},

{pt:title} is a {age} {man} under my care for {dx} since {year:dx}. Recent {neg:lab} ({date:prior2|numeric}) and {neg:bp} prompted this referral. Current regimen: {neg:med}.

{His} contact details are {phone:pt} and {email:pt}; mailing address {addr:line}. {He} attends {school} part time and would prefer afternoon appointments.

Thank you in advance for seeing {him}."""),
    ("lab_report", "body", """Point-of-care / send-out results
Requisition {order} | Specimen {accession} | Patient {pt:full} | DOB {date:dob|full}
Collected {date:collected|time} at {clinic}
{neg:labs}
Send-out to reference lab, expected {date:reported|partial}.
Authorized by {pcp:sig}."""),
    ("telephone_encounter", "body", """Telephone visit - {date:note|full}, started {neg:time}, duration {neg:duration}
Participants: patient ({phone:pt}) and {rel}.
Discussed: results of {neg:lab} from {date:prior2|partial}; {pt:first} will stop {neg:med}.
Scheduled: lab draw at {clinic} on {date:future2|numeric}. Pharmacy: {addr:city} location.
Documented by {np:sig}"""),
    ("operative_note", "body", """PROCEDURE RECORD {date:surgery|numeric}
{pt:hdr} / MRN {mrn} / {age:n} yo / {hosp}
Procedure: {proc}. Laterality verified.
Operators: {surgeon:sig}; first assist {resident:plain}. Anesthetist {anesth:plain}.
Narrative: {neg:eponym_position}; {neg:eponym_device} placed. Tourniquet time {neg:duration}. Sponge and needle counts correct.
Plan: discharge when criteria met; post-op visit {date:followup|full} with {surgeon:dr}."""),
    ("consult_note", "body", """Consultation requested by {attending:dr} ({hosp}) on {date:note|numeric}
Question asked: {dx} management.
History: {pt:ref}, {age}, transferred from {hosp:other} {date:transfer|partial}. Born in {country}; lives in {addr:city}. Retired {employer} employee. Accompanied by {rel}.
Exam/data: {neg:vitals}; {neg:labs}; {neg:eponym_sign} present.
Assessment & recommendations: {neg:med}; {neg:score}. Will sign off; re-consult via {pager}.
{consultant:sig}"""),
]
