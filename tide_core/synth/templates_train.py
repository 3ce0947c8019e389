"""Template family ``train``: wording used only in the training corpus (and the demo).

Rows are (note_type, section, text).  Slots are documented in tide_core/synth/slots.py.
"""

ROWS = [
    # ---------------------------------------------------------------- generic headers
    ("any", "header", """{hosp}
{title}
Patient: {pt:hdr}    MRN: {mrn}    DOB: {date:dob|full}
Date of Service: {date:note|full}    {neg:room}"""),
    ("any", "header", """{title} -- {hosp}
Name: {pt:hdr}
Medical Record #: {mrn}
Acct #: {acct}
Date of birth: {date:dob|numeric}   Age: {age:n}   Sex: {sexm}
Encounter date: {date:note|time}"""),
    ("any", "header", """{pt:hdr} | MRN# {mrn} | DOB {date:dob|full} | {age:n} y.o. {sexl}
{hosp} | {faddr:line}
{title}  Visit: {date:note}"""),
    ("any", "header", """PATIENT NAME: {pt:hdr}
PATIENT ID: {mrn}    SSN: {ssn}
ATTENDING: {attending:sig}
SERVICE DATE: {date:note|full}
{title}"""),
    # ---------------------------------------------------------------- generic sign-offs
    ("any", "sign", """Electronically signed by {attending:sig} on {date:note|time}"""),
    ("any", "sign", """{attending:sig}
{hosp}
Tel {phone:fac}  Fax {fax}
{neg:page}"""),
    ("any", "sign", """Dictated by: {resident:sig}
Attending: {attending:sig}
D: {date:note|numeric}  T: {date:received|numeric}  Job #{order}"""),
    ("any", "sign", """I have seen and examined the patient and agree with the plan above. [[Questions: pager {pager}.|Please page with questions ({pager}).|Contact me at {email:dr} with questions.]]
{attending:dr}, {specialty}"""),
    # ---------------------------------------------------------------- generic extras
    ("any", "extra", """SOCIAL HISTORY: [[Lives with|Resides with|Lives at home with]] {rel} in {addr:citystate}. [[Works as a warehouse supervisor at|Employed at|Retired from]] {employer}. Former smoker, {neg:duration}. [[Denies illicit drug use.|Occasional alcohol use.]]"""),
    ("any", "extra", """CONTACT INFORMATION:
Home address: {addr:line}
Phone: {phone:pt}
Email: {email:pt}
Emergency contact: {rel:name} ({rel:relation}) {rel:phone}"""),
    ("any", "extra", """FAMILY HISTORY: Mother with {neg:eponym_disease}, died at age {relage}. Father with {dx}. [[No family history of colon cancer.|Sister with breast cancer diagnosed in {year:dx}.]]"""),
    ("any", "extra", """Insurance: Member ID {member}. Patient portal: {url:portal}. Last seen by PCP {pcp:dr} on {date:lastvisit|full}."""),
    ("any", "extra", """Medications on admission:
{neg:meds}
Allergies: [[NKDA|penicillin (rash)|sulfa drugs|codeine (nausea)]]"""),
    ("any", "extra", """Follow-up: {pcp:dr} at {clinic} in {num:1-4} weeks, on or around {date:followup|partial}. Call {phone:fac} to schedule."""),
    ("any", "header", """{hosp}\t\t{title}
Patient Name: {pt:hdr}\tDOB: {date:dob}\tAge: {age:n}
MRN: {mrn}\tCSN: {csn}
Admit: {date:admit|numeric}\tAttending: {attending:sig}"""),
    ("any", "extra", """Telehealth: visit conducted by video ({url:tele}); session originated from {url:ip}. Patient at home in {addr:city}. Consent obtained verbally."""),
    ("any", "extra", """ADVANCE CARE PLANNING: Health care proxy is {rel:name} ({rel:relation}), reachable at {rel:phone}. Code status: full code. POLST on file dated {date:prior|full}."""),
    ("any", "extra", """Outside records: requested from {hosp:other} (fax {fax}). Prior imaging at {clinic} in {date:prior|month}. Immunizations: influenza {date:vaccine|month}, Tdap {year:vaccine}."""),
    # ---------------------------------------------------------------- discharge summary
    ("discharge_summary", "body", """Admission Date: {date:admit|full}
Discharge Date: {date:discharge|full}

HISTORY OF PRESENT ILLNESS:
{pt:full} is a {age} {man} with a history of {dx} and {neg:eponym_disease} who presented to the {hosp} emergency department with {sx} {neg:duration}. [[On arrival|In the ED]] vitals were {neg:vitals}. Labs notable for {neg:labs}.

HOSPITAL COURSE:
The patient was admitted to the medicine service under {attending:dr}. {He} was started on {neg:med} and improved. {neg:eponym_disease} was noted and managed conservatively. A {neg:eponym_device} was placed on {date:admit|partial} and removed on hospital day {num:2-5}. {pt:ref} was seen by {specialty} ({consultant:dr}) who recommended continuing current therapy.

DISCHARGE DIAGNOSES: 1. {dx} ({neg:icd}) 2. {dx}
DISCHARGE CONDITION: stable. Discharged home with {rel} at {neg:time}."""),
    ("discharge_summary", "body", """DATES OF HOSPITALIZATION: {range:admit,discharge}
PRINCIPAL DIAGNOSIS: {dx}

BRIEF HISTORY: {age}[[ | ]]{sexl} [[with|w/]] {dx} admitted for {sx}. Transferred from {hosp:other} on {date:transfer|full} for a higher level of care.

COURSE BY PROBLEM:
# {dx}: treated with {neg:med}. Repeat {neg:lab} on {date:discharge|partial}.
# {neg:eponym_disease}: stable, {neg:score}.
# PSH: {neg:eponym_procedure} in {year:dx}; {proc}.
# Disposition: {pt:ref} will go home to {addr:cityzip}. {His} {rel:relation} {rel:name} will provide transportation ({rel:phone}).

DISCHARGE MEDICATIONS:
{neg:meds}

FOLLOW UP: {pcp:dr} within 7 days; [[{specialty} clinic|cardiology clinic]] on {date:followup|full}."""),
    # ---------------------------------------------------------------- progress note
    ("progress_note", "body", """SUBJECTIVE: {pt:ref} returns for follow-up of {dx}. Since the last visit on {date:lastvisit} {he} reports {sx}. [[Taking|Adherent to]] {neg:med}. {He} [[is a student at|attends]] {school} [[part time|]] and works at {employer}.

OBJECTIVE: {neg:vitals}. {neg:measure}. {neg:eponym_sign} absent.

ASSESSMENT/PLAN: {age} {man} with {dx}.
- Continue {neg:med}
- Check {neg:lab} before next visit
- Return in {num:2-12} weeks or sooner; [[RTC|follow up]] {date:followup|partial}"""),
    ("progress_note", "body", """Interval history: patient {pt:first} states {he} has been doing well since {date:prior|month}. {sx} improved. {His} {rel:relation} reports {he} has been more active. Last A1c on {date:prior2|numeric} was {neg:lab}.
Exam: {neg:bp}, {neg:score}. Lungs clear. {neg:eponym_sign} negative.
Plan: discussed with {pcp:dr}. Refill {neg:med}. Labs ordered (order {order}). Follow-up {date:followup}."""),
    ("progress_note", "body", """Hospital Day #{num:2-9}
S: Overnight [[no acute events|patient had one episode of {sx}]]. Per nursing ({rn:sig}) slept well after {neg:time}.
O: {neg:vitals}
   {neg:labs}
A/P: {pt:ref}, {age:n}{sexm}, admitted {date:admit|partial} with {dx}.
 1. {dx} - continue {neg:med}; {neg:eponym_device} in place.
 2. Dispo - anticipate discharge to {hosp:other} vs home."""),
    # ---------------------------------------------------------------- radiology
    ("radiology_report", "body", """EXAM: CT abdomen and pelvis with contrast
ACCESSION: {accession}   ORDERING: {attending:dr}
DATE: {date:imaging|time}
CLINICAL HISTORY: {age} {sexl} with {sx}.
COMPARISON: {date:prior|full} [[at {hosp:other}|]].
FINDINGS: There is a {neg:measure} hypodense lesion in the right hepatic lobe. No free air. {neg:eponym_disease} noted incidentally.
IMPRESSION: 1. No acute process. 2. Recommend follow-up imaging in 6 months ({date:followup|month}).
Findings discussed with {attending:dr} by telephone at {neg:time}."""),
    ("radiology_report", "body", """CHEST RADIOGRAPH, 2 VIEWS
Patient: {pt:hdr}  ID: {mrn}  Exam date {date:imaging|numeric}
Indication: {sx}, r/o pneumonia.
Technique: PA and lateral. Dose report {neg:version}.
Findings: Heart size normal. No focal consolidation. A {neg:eponym_device} tip projects over the SVC.
Impression: No acute cardiopulmonary abnormality.
Read by {radiologist:sig}; prelim by {resident:dr}."""),
    # ---------------------------------------------------------------- pathology
    ("pathology_report", "body", """SURGICAL PATHOLOGY   Case: {accession}
Collected: {date:collected|full}   Received: {date:received|full}   Reported: {date:reported|full}
Submitting physician: {surgeon:dr}   Location: {hosp}
CLINICAL: {age:n} y/o with {dx}; {proc}.
GROSS: Received in formalin labeled with the patient's name ({pt:hdr}) and MRN {mrn} is a {neg:measure} tan-pink fragment.
DIAGNOSIS: Adenocarcinoma, moderately differentiated, {neg:eponym_score}. Margins negative ({neg:measure}).
Pathologist: {pathologist:sig}"""),
    ("pathology_report", "body", """Specimen: A. right breast core biopsy  B. axillary lymph node
Accession # {accession}; Requisition {order}
FINAL DIAGNOSIS:
A. Invasive ductal carcinoma, Nottingham grade 2 ({neg:ratio}).
B. One of three lymph nodes positive ({neg:measure}).
Comment: Case reviewed with {pathologist:dr} at intradepartmental conference on {date:reported|partial}. Results called to {surgeon:dr}'s office ({phone:fac}) on {date:reported|numeric} at {neg:time}."""),
    # ---------------------------------------------------------------- ED
    ("ed_note", "body", """CHIEF COMPLAINT: {sx}
HPI: {age} {man} brought in by EMS from {addr:street} after {rel} found {him} on the floor at {neg:time}. Onset {date:onset|partial}. PMH {dx}, {neg:eponym_disease}.
TRIAGE: {neg:vitals}  {neg:score}  ESI 2. Placed in {neg:room}.
ED COURSE: Given {neg:med}. Labs {neg:labs}. CT head negative.
DISPOSITION: Admitted to {attending:dr}. Family ({rel:name}) updated at bedside."""),
    ("ed_note", "body", """Time seen: {neg:time}
{pt:full}, {age:n} y/o, presents with {sx} {neg:duration}. Was seen at {hosp:other} urgent care on {date:prior2} and given {neg:med}. Lives in {city} with {rel}. Works at {employer}.
Exam: {neg:bp}. {neg:eponym_sign} negative. GCS 15.
MDM: differential includes {dx}. Discussed with {consultant:dr} ({specialty}), who will see the patient. Tetanus last given {year:vaccine}."""),
    # ---------------------------------------------------------------- nursing
    ("nursing_note", "body", """{date:note|time} RN NOTE
Pt resting in bed, {neg:room}. A&Ox3. {neg:vitals}. {neg:eponym_device} draining clear yellow urine. Pain {neg:score}. Medicated with {neg:med} at {neg:time} per MAR. {His} {rel:relation} {rel:name} at bedside, updated on plan of care. Call light within reach.
{rn:sig}"""),
    ("nursing_note", "body", """Shift summary: Received report from {rn2:sig} at {neg:time}. Patient {pt:title} alert, tolerating diet. IV site clean, {neg:dose} infusing. Fall risk: {neg:score}. Skin: {neg:eponym_score} assessment done. Discharge teaching provided to pt and {rel}; phone number {phone:pt} confirmed for follow-up call."""),
    # ---------------------------------------------------------------- referral letter
    ("referral_letter", "header", """{hosp}
{faddr:block}
Phone {phone:fac} | Fax {fax}

{date:note|full}

{referring:dr}
{clinic}
{city:state}

RE: {pt:full}   DOB: {date:dob|full}   MRN: {mrn}"""),
    ("referral_letter", "body", """Dear {referring:dr},

Thank you for referring {pt:title} to our {specialty} clinic. I saw {him} on {date:note|full}. As you know, {he} is a {age} {man} with {dx} diagnosed in {year:dx} and {neg:eponym_disease}. {He} lives with {rel} in {addr:citystate} and is employed by {employer}.

On examination {neg:bp}, {neg:score}. I recommended starting {neg:med} and obtaining an echocardiogram. I will see {him} again on {date:followup|full}.

Please do not hesitate to contact me at {phone:dr} or {email:dr}."""),
    ("referral_letter", "sign", """Sincerely,

{consultant:sig}
{specialty}, {hosp}
cc: {pcp:dr}"""),
    # ---------------------------------------------------------------- lab report
    ("lab_report", "body", """Specimen ID: {accession}    Collected: {date:collected|time}    Resulted: {date:received|time}
Ordering provider: {attending:sig}    NPI {npi}
TEST                 RESULT     REF RANGE
Sodium               {num:128-146}        135-145 mmol/L
Potassium            4.{num:0-9}        3.5-5.1 mmol/L
Creatinine           1.{num:0-9}        0.6-1.2 mg/dL
Hemoglobin           1{num:0-6}.{num:0-9}       12.0-16.0 g/dL
Comment: {neg:lab}. Critical value called to {rn:sig} at {neg:time}, read back verified.
Performing lab: {hosp}, {faddr:line}"""),
    ("lab_report", "body", """LAB RESULTS for {pt:hdr} (MRN {mrn}, DOB {date:dob|numeric})
Collection date: {date:collected}
{neg:labs}
{neg:lab}; {neg:lab}
Interpretation: {neg:ratio}. Reviewed by {attending:dr} on {date:received|partial}."""),
    # ---------------------------------------------------------------- telephone
    ("telephone_encounter", "body", """Call received from {rel} at {rel:phone} on {date:note|time}. Caller states {pt:first} has had {sx} since {date:onset|partial}. Taking {neg:med}. Advised to go to {hosp} ED if symptoms worsen. Message routed to {pcp:dr}.
Callback number confirmed: {phone:pt}.
{ma:sig}"""),
    ("telephone_encounter", "body", """Patient {pt:full} called the clinic requesting a refill of {neg:med}. Verified identity with DOB {date:dob|full} and address {addr:line}. Last office visit {date:lastvisit|full}. Refill sent to pharmacy. Pt asked that results be sent to {email:pt}.
{rn:sig} {neg:time}"""),
    # ---------------------------------------------------------------- operative
    ("operative_note", "body", """DATE OF OPERATION: {date:surgery|full}
PREOPERATIVE DIAGNOSIS: {dx}
PROCEDURE: {proc}
SURGEON: {surgeon:sig}
ASSISTANT: {resident:sig}
ANESTHESIA: General, {anesth:dr}
EBL: {neg:measure}. Specimens to pathology. A {neg:eponym_device} was left in place.
DESCRIPTION: The patient was identified in the preoperative holding area by name and MRN {mrn}. Consent was confirmed. Patient placed in {neg:eponym_position}. Time out performed at {neg:time}. Counts correct x2.
Implant: lot {device}. The patient tolerated the procedure well and was taken to PACU in stable condition."""),
    ("operative_note", "body", """Brief op note - {date:surgery|numeric}
Pre-op dx: {dx}. Post-op dx: same.
Procedure: {proc}
Surgeon: {surgeon:dr}   Anesthesiologist: {anesth:sig}   Scrub: {rn:sig}
Findings: {neg:measure} mass, {neg:eponym_disease}. Drains: {neg:eponym_device}.
Complications: none. Dispo: PACU then floor ({neg:room})."""),
    # ---------------------------------------------------------------- consult
    ("consult_note", "body", """REASON FOR CONSULTATION: {dx}
REQUESTING PHYSICIAN: {attending:dr}
HPI: {pt:ref} is a {age} {man} [[from {city}|originally from {country}]] admitted on {date:admit|full} with {sx}. Past history of {neg:eponym_disease} diagnosed at {hosp:other} in {year:dx}. Previously followed by {pcp:dr}.
EXAM: {neg:vitals}. {neg:eponym_sign}.
RECOMMENDATIONS:
1. Start {neg:med}.
2. Check {neg:lab} in AM.
3. We will follow; please call {pager} with questions.
{consultant:sig}, {specialty}"""),
    ("consult_note", "body", """Consult requested by {attending:dr} for evaluation of {sx}.
{pt:first} is a pleasant {age:n} yo {man}, accompanied by {rel}. Onset {date:onset}. {He} was recently hospitalized at {hosp:other} ({range:prior,prior2}). Works as a teacher at {school}.
Assessment: {dx}; {neg:score}.
Plan: discussed with patient and {rel:relation}. Follow-up in {specialty} clinic at {clinic} on {date:followup|full}."""),
]

ROWS += [
    ("discharge_summary", "body", """ADMITTED: {date:admit|full}   DISCHARGED: {date:discharge|time}
HPI: Patient is a {age} {sexl} [[who lives alone|who lives with {rel}]] and presented with {sx}. Past history notable for {neg:eponym_disease} and {dx}.
HOSPITAL COURSE: Admitted to {neg:room}. {neg:eponym_device} was placed. Cultures from {date:admit|partial} grew {neg:ratio}. Treated with {neg:med}.
PROCEDURES: {proc} on {date:surgery|partial} by {surgeon:dr}.
CONDITION AT DISCHARGE: improved, ambulating, {neg:score}.
PATIENT INSTRUCTIONS: Call {phone:fac} or return to {hosp} for fever > 101 F. Appointment {date:followup|time} with {pcp:dr}."""),
    ("progress_note", "body", """Chief complaint: {sx}
{pt:ref} is a {age} {man} seen today with {his} {rel:relation}. {He} was last hospitalized at {hosp:other} from {range:prior,prior2}. Current meds include {neg:med}.
Surgical history: s/p {neg:eponym_procedure}.
ROS: otherwise negative. PE: {neg:vitals}. {neg:eponym_sign}.
Data: {neg:lab} on {date:prior2|numeric}.
A/P: {dx}, {neg:icd}. Increase {neg:dose}. Recheck {neg:lab}. Next visit {date:followup|full} with {pcp:dr} at {clinic}."""),
    ("radiology_report", "body", """PROCEDURE: [[Bilateral screening mammogram|CT angiography chest|Renal ultrasound|MRI lumbar spine]]
Acc #: {accession}  Study date: {date:imaging|full}  Ordered by: {pcp:sig}
Clinical indication: {age:n} yo {sexl}, {sx}.
Comparison: outside study from {hosp:other} dated {date:prior|numeric}.
Findings: {neg:measure} lesion, BI-RADS 2. {neg:eponym_sign} unremarkable.
IMPRESSION: Benign. Follow-up in one year ({year:followup}).
Electronically signed: {radiologist:sig} {date:reported|time}"""),
    ("pathology_report", "body", """Patient: {pt:hdr}   Path #: {accession}   DOB: {date:dob|full}
Procedure date: {date:collected|numeric}; Clinician: {surgeon:sig}
Specimen: colon, sigmoid, polypectomy.
Diagnosis: tubular adenoma, no high-grade dysplasia. {neg:measure}.
Ancillary: MMR proteins intact; {neg:ratio}.
Signed out by {pathologist:dr} on {date:reported|full}. Tissue block ID {alnum}."""),
    ("ed_note", "body", """ED PROVIDER NOTE  ({date:note|time})
{pt:full} is a {age} {man} who presents from {hosp:other} nursing home with {sx}. Per {rel}, symptoms began {date:onset}. Hx {neg:eponym_disease}, {dx}.
Vitals: {neg:vitals}. {neg:score}. Exam: {neg:eponym_sign}.
Results: {neg:labs}. EKG at {neg:time}: NSR.
Plan: {neg:med}; admit to hospitalist ({attending:dr}); family contact {rel:phone}."""),
    ("nursing_note", "body", """Admission nursing assessment, {date:note|full}
Patient {pt:full} arrived to unit via stretcher at {neg:time} from ED. Oriented to room ({neg:room}) and call light. Belongings inventoried; glasses and dentures with {rel}. Home pharmacy is on {addr:street}. {neg:eponym_device} in place on arrival. {neg:score}.
{rn:sig}"""),
    ("referral_letter", "body", """Dear {referring:dr}:

RE: {pt:full} (DOB {date:dob|numeric}, MRN {mrn})

I had the pleasure of evaluating your patient in the {specialty} clinic at {hosp} on {date:note|full}. {He} is a {age} {man} referred for {sx}. {His} history is significant for {neg:eponym_disease} and {dx}, first noted in {date:dx|month}.

Exam: {neg:vitals}. Impression: {dx}. Plan: {neg:med}; return visit on {date:followup|full}. I have asked {him} to call {phone:fac} with any concerns. A copy of this letter was sent to {pt:title} at {addr:line}."""),
    ("lab_report", "body", """COAGULATION / HEMATOLOGY
Name: {pt:hdr}   MRN: {mrn}   Sex: {sexm}   Age: {age:n}
Specimen #: {accession}   Received: {date:received|time}
{neg:lab}
{neg:lab}
{neg:lab}
Ordering: {pcp:sig} ({clinic}). Result phoned to {rn:sig} at {neg:time}."""),
    ("telephone_encounter", "body", """TELEPHONE ENCOUNTER {date:note|numeric} at {neg:time}
Spoke with patient's {rel:relation}, {rel:name}, who called from {rel:phone}. {pt:ref} fell at home yesterday ({date:onset|partial}). No head strike. Advised evaluation at {clinic} or {hosp}. Caller verbalized understanding. Forwarded to {pcp:dr}.
{rn:sig}"""),
    ("operative_note", "body", """OPERATIVE NOTE
Patient: {pt:hdr}  MRN: {mrn}  Date: {date:surgery|full}
Surgeon: {surgeon:dr}  Assistant: {np:sig}
Procedure: {proc}
Anesthesia: spinal ({anesth:sig})
Indications: {age} {sexl} with {dx}; risks including {neg:eponym_disease} discussed with patient and {rel}.
Technique: {neg:eponym_position}; {neg:eponym_device}. Implant serial {device}.
EBL {neg:measure}. Disposition: PACU, {neg:room}."""),
    ("consult_note", "body", """{specialty} CONSULT NOTE
Date of consult: {date:note|full}   Requested by: {attending:sig}
Reason: {sx}
HPI: {pt:full} is a {age} {man} with {dx} admitted {date:admit|numeric}. {He} reports symptoms since {date:onset|partial}. Lives in {addr:city} with {rel}; works at {employer}.
Exam: {neg:vitals}. {neg:score}. {neg:eponym_sign} negative.
Recommendations: {neg:med}; check {neg:lab}; will follow daily. Pager {pager}.
{consultant:sig}"""),
]
